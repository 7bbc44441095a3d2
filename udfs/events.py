"""What the parsing core makes of one landed record: a change, an ignored record, or a rejection."""

from typing import NamedTuple

from udfs.reasons import IgnoreClass, Outcome, RecordError


class ParsedRecord(NamedTuple):
    """One landed record, parsed. Exactly one of three shapes, told apart by `outcome`:

    - `change`: a row change (or a truncate) with every field below that the format knows;
    - `ignored`: a record of a counted ignore class (`ignore_class`), with `row_key` for tombstones;
    - `quarantine`: `reason` (a stable code) and `detail` (for a person).
    """

    outcome: str
    ignore_class: str | None = None
    reason: str | None = None
    detail: str | None = None
    source_format: str | None = None
    connector: str | None = None
    source_db: str | None = None
    source_table: str | None = None
    op: str | None = None
    row_key: str | None = None
    before: str | None = None
    after: str | None = None
    unavailable_columns: tuple[str, ...] = ()
    """Columns of `after` whose value is unknown and keeps the previous one (TOAST, Qlik masks)."""
    changed_columns: tuple[str, ...] | None = None
    source_ts_ms: int | None = None
    event_ts_ms: int | None = None
    position: str | None = None
    """Sort key of the source position (see `udfs.positions`)."""
    source_lsn: int | None = None
    source_tx_id: str | None = None
    source_snapshot: str | None = None
    transaction_id: str | None = None
    transaction_total_order: int | None = None
    transaction_data_collection_order: int | None = None
    patch: str | None = None
    """A partial change to apply to the key's previous row, for an update that carries no full
    `after` (MongoDB `patch` / `updateDescription`): JSON `{"set": {path: value}, "unset": [path],
    "truncate": {path: size}}`, each path a dotted path into nested documents and arrays (see
    `udfs.mongodb` and `udfs.row_images.apply_patch`)."""
    transaction_status: str | None = None
    """A Debezium transaction marker's `status` (BEGIN or END); its id is `transaction_id`."""
    transaction_event_count: int | None = None
    """An END marker's `event_count`: the events its transaction wrote."""
    transaction_collection_counts: str | None = None
    """An END marker's `data_collections` as canonical JSON `{data_collection: event_count}`."""
    qlik_schema_id: str | None = None
    """The Qlik `schemaId` a metadata message declares or a data message was read under (or waits
    for, while quarantined as `unknown_qlik_schema`): the SQL binds the two through it."""


def quarantined(error: RecordError, *, qlik_schema_id: str | None = None) -> ParsedRecord:
    return ParsedRecord(
        outcome=Outcome.QUARANTINE.value, reason=error.reason.value, detail=error.detail, qlik_schema_id=qlik_schema_id
    )


def ignored(
    ignore_class: IgnoreClass,
    *,
    row_key: str | None = None,
    detail: str | None = None,
    qlik_schema_id: str | None = None,
) -> ParsedRecord:
    return ParsedRecord(
        outcome=Outcome.IGNORED.value,
        ignore_class=ignore_class.value,
        row_key=row_key,
        detail=detail,
        qlik_schema_id=qlik_schema_id,
    )
