"""The mart a scaffold writes, planned from the evidence of one table: each column's source field,
name, Spark type (the best information landed, `cdc_dbt.column_types`) and whether it is part of
the row key."""

from dataclasses import dataclass

from cdc_dbt.column_types import ColumnType, Seen, debezium_type, qlik_type, seen_type
from cdc_dbt.scaffold.evidence import TableEvidence
from cdc_dbt.scaffold.names import column_names
from udfs import qlik


@dataclass(frozen=True)
class MartColumn:
    """A column of the mart: the row JSON field it reads, its name and type, and whether it is part of the key."""

    name: str
    source_field: str
    column_type: ColumnType
    is_key: bool


@dataclass(frozen=True)
class Mart:
    source_table: str
    connector: str | None
    model_stem: str
    columns: tuple[MartColumn, ...]

    @property
    def key_names(self) -> list[str]:
        return [column.name for column in self.columns if column.is_key]


def field_types(evidence: TableEvidence) -> dict[str, ColumnType]:
    """Each field's type from the best information landed, fields in the source's order: the
    newest Debezium schema's (or Qlik table version's) first, then older versions' fields, then
    fields only the rows show. A field takes its type from the newest schema that types it."""
    schemas = [row_schema for row_schema, _ in sorted(evidence.row_schemas.values(), key=lambda entry: -entry[1])]
    versions = [table for table, _ in sorted(evidence.qlik_schemas.values(), key=_newest_version_first)]
    ordered: dict[str, None] = {}
    for row_schema in schemas:
        ordered.update(dict.fromkeys(row_schema))
    for table_schema in versions:
        ordered.update(dict.fromkeys(column.name for column in table_schema.columns))
    ordered.update(dict.fromkeys(evidence.seen))
    ordered.update(dict.fromkeys(evidence.key_fields))

    def best_type(name: str) -> ColumnType:
        for row_schema in schemas:
            if name in row_schema and (column_type := debezium_type(row_schema[name])) is not None:
                return column_type
        for table_schema in versions:
            for column in table_schema.columns:
                if column.name == name and (column_type := qlik_type(column)) is not None:
                    return column_type
        return seen_type(evidence.seen.get(name, Seen()))

    return {name: best_type(name) for name in ordered}


def _newest_version_first(entry: tuple[qlik.QlikTableSchema, int]) -> tuple[int, int]:
    """Qlik table versions by `tableVersion`, then by landing order, newest first."""
    table_schema, landing_order = entry
    return -(table_schema.table_version or 0), -landing_order


def key_fields(evidence: TableEvidence) -> list[str]:
    """The row key's fields: the Debezium key (MongoDB's `_id`), or Qlik's primaryKeyPosition
    columns of the newest table version when no change has landed yet."""
    if evidence.key_fields:
        return list(evidence.key_fields)
    versions = sorted(evidence.qlik_schemas.values(), key=_newest_version_first)
    return list(versions[0][0].key_columns) if versions else []


def plan_mart(evidence: TableEvidence, model_stem: str) -> Mart:
    types = field_types(evidence)
    keys = set(key_fields(evidence))
    names = column_names(types)
    columns = tuple(MartColumn(names[name], name, types[name], name in keys) for name in types)
    return Mart(evidence.source_table, evidence.connector, model_stem, columns)
