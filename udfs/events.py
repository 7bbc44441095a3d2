"""What the parsing core makes of one landed record: a change, an ignored record, or a rejection."""

from collections.abc import Mapping
from typing import Any, NamedTuple

from udfs import json_text
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
    """The events a transaction wrote: a Debezium END marker's `event_count`, or the
    `transactionEventCounter` of a Qlik change that is its transaction's last event."""
    transaction_collection_counts: str | None = None
    """An END marker's `data_collections` as canonical JSON `{data_collection: event_count}`."""
    qlik_schema_id: str | None = None
    """The Qlik `schemaId` a metadata message declares or a data message was read under (or waits
    for, while quarantined as `unknown_qlik_schema`): the SQL binds the two through it."""


def change(
    source_format: str,
    op: str,
    *,
    source_table: str | None,
    row_key: str | None,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    position: str,
    **fields: Any,
) -> ParsedRecord:
    """A row change (or a truncate), its row images written as JSON text.

    `fields` are the other `ParsedRecord` fields the format knows, by their own names; the rest
    stay empty. (Not listed again here: that would be one more copy of the record to keep in step,
    and a wrong name fails at the first change of that format, which every format's tests make.)
    """
    return ParsedRecord(
        outcome=Outcome.CHANGE.value,
        source_format=source_format,
        source_table=source_table,
        op=op,
        row_key=row_key,
        before=json_text.dumps(before) if before is not None else None,
        after=json_text.dumps(after) if after is not None else None,
        position=position,
        **fields,
    )


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
