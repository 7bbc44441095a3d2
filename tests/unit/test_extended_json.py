import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.corpus import corpus_lines
from udfs.extended_json import format_date, loads, unwrap
from udfs.reasons import Reason, RecordError

PAIMON_BSON = [line for line in corpus_lines("paimon-debezium-mongodb", "event-bson.txt") if line.startswith("{")]
PAIMON_FLAT = [line for line in corpus_lines("paimon-debezium-mongodb", "event-json.txt") if line.startswith("{")]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ISO_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.mark.parametrize(
    ("wrapped", "plain"),
    [
        ({"$oid": "5eb626b3452cd570b405bf7d"}, "5eb626b3452cd570b405bf7d"),
        ({"$numberInt": "-7"}, -7),
        ({"$numberLong": "1735934393769"}, 1735934393769),
        ({"$numberLong": "123456789012345678901234567890"}, 123456789012345678901234567890),
        ({"$numberDouble": "121.4737"}, 121.4737),
        ({"$numberDouble": "0"}, 0.0),
        ({"$numberDouble": "NaN"}, "NaN"),
        ({"$numberDouble": "-Infinity"}, "-Infinity"),
        ({"$numberDecimal": "3.140"}, "3.140"),
        ({"$numberDecimal": "1E+6144"}, "1E+6144"),
        ({"$numberDecimal": "NaN"}, "NaN"),
        ({"$date": 1533868558652}, "2018-08-10T02:35:58.652Z"),
        ({"$date": {"$numberLong": "1533868558652"}}, "2018-08-10T02:35:58.652Z"),
        ({"$date": "2018-08-10T10:35:58.652+08:00"}, "2018-08-10T02:35:58.652Z"),
        ({"$date": "2018-08-10T02:35:58Z"}, "2018-08-10T02:35:58.000Z"),
        ({"$date": -1}, "1969-12-31T23:59:59.999Z"),
        ({"$timestamp": {"t": 1736997330, "i": 2}}, {"t": 1736997330, "i": 2}),
        ({"$binary": {"base64": "uE2/4v5MSVOiJZkOo3APKQ==", "subType": "04"}}, "b84dbfe2-fe4c-4953-a225-990ea3700f29"),
        ({"$binary": "uE2/4v5MSVOiJZkOo3APKQ==", "$type": "00"}, "uE2/4v5MSVOiJZkOo3APKQ=="),
        ({"$uuid": "B84DBFE2-FE4C-4953-A225-990EA3700F29"}, "b84dbfe2-fe4c-4953-a225-990ea3700f29"),
        ({"$regularExpression": {"pattern": "^pass$", "options": "i"}}, "/^pass$/i"),
        ({"$regex": "^a", "$options": ""}, "/^a/"),
        ({"$symbol": "symbol"}, "symbol"),
        ({"$code": "function(){}"}, "function(){}"),
        ({"$code": "f(x)", "$scope": {"x": {"$numberInt": "1"}}}, {"code": "f(x)", "scope": {"x": 1}}),
        ({"$dbPointer": {"$ref": "db.coll", "$id": {"$oid": "abc"}}}, {"$ref": "db.coll", "$id": "abc"}),
        ({"$minKey": 1}, "MinKey"),
        ({"$maxKey": 1}, "MaxKey"),
        ({"$undefined": True}, None),
    ],
)
def test_each_wrapper_unwraps_to_its_plain_value(wrapped: dict[str, Any], plain: Any) -> None:
    assert unwrap(wrapped) == plain


def test_documents_and_arrays_are_unwrapped_throughout_and_keep_their_order() -> None:
    document = loads('{"b": [{"$numberLong": "1"}, {"c": {"$oid": "ff"}}], "a": {"$numberDecimal": "0.10"}}')
    assert document == {"b": [1, {"c": "ff"}], "a": "0.10"}
    assert list(document) == ["b", "a"]


def test_an_object_with_more_than_a_wrapper_s_keys_is_a_document() -> None:
    assert unwrap({"$oid": "ff", "note": {"$numberInt": "2"}}) == {"$oid": "ff", "note": 2}
    assert unwrap({"$ref": "users", "$id": {"$oid": "ff"}}) == {"$ref": "users", "$id": "ff"}


def test_decimals_never_pass_through_a_float() -> None:
    assert json.dumps(unwrap({"$numberDecimal": "0.1000000000000000055511151231257827"})) == (
        '"0.1000000000000000055511151231257827"'
    )


def test_dates_outside_what_iso_text_holds_keep_their_epoch_milliseconds() -> None:
    assert format_date(-62135596800000) == "0001-01-01T00:00:00.000Z"
    assert format_date(-62135596800001) == -62135596800001
    assert format_date(2**62) == 2**62


@pytest.mark.parametrize(
    "wrapped",
    [
        {"$numberLong": "twelve"},
        {"$numberLong": True},
        {"$numberInt": 1.5},
        {"$numberDouble": "fast"},
        {"$numberDecimal": "1,5"},
        {"$date": "yesterday"},
        {"$date": 1.5},
        {"$oid": 12},
        {"$binary": "not base64!", "$type": "00"},
        {"$timestamp": 5},
        {"$uuid": "nope"},
    ],
)
def test_a_wrapper_that_does_not_fit_its_type_is_an_invalid_value(wrapped: dict[str, Any]) -> None:
    with pytest.raises(RecordError) as raised:
        unwrap({"doc": {"field": wrapped}}, "after")
    assert raised.value.reason is Reason.INVALID_VALUE
    assert raised.value.detail.startswith("after.doc.field: ")


def paimon_text(value: Any) -> str | None:
    """Our plain value as Paimon's flat string reader prints it (DebeziumBsonRecordParserTest)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and ISO_DATE.fullmatch(value):
        return str((datetime.fromisoformat(value) - EPOCH) // timedelta(milliseconds=1))  # Paimon: epoch ms
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


PAIMON_DIVERGENCES = {
    "register_time": ({"t": 1736997330, "i": 2}, "Paimon drops the increment; we keep both parts"),
    "minKey": ("MinKey", "Paimon prints its Java class name BsonMinKey"),
    "maxKey": ("MaxKey", "Paimon prints its Java class name BsonMaxKey"),
}


def test_paimon_bson_document_unwraps_to_what_paimon_reads_field_by_field() -> None:
    ours = loads(PAIMON_BSON[1])
    paimon = json.loads(PAIMON_FLAT[1])
    assert list(ours) == list(paimon)
    for name, value in ours.items():
        if name in PAIMON_DIVERGENCES:
            assert value == PAIMON_DIVERGENCES[name][0], name
        else:
            assert paimon_text(value) == paimon[name], name
    assert ours["deleted_time"] == "2025-01-03T19:59:53.769Z"
