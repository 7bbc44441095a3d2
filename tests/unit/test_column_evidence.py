"""What a change event says about its columns beyond its row JSON (`udfs.column_evidence`): the
converter's field schemas of the row, and MongoDB's documents with their Extended JSON kept."""

from typing import Any

from udfs.column_evidence import mongodb_documents, row_field_schemas

ID = {"type": "int32", "optional": False, "field": "id"}
NAME = {"type": "string", "optional": True, "field": "name"}


def row_struct(*fields: dict[str, Any], field: str) -> dict[str, Any]:
    return {"type": "struct", "optional": True, "fields": list(fields), "field": field}


def test_an_envelopes_row_schema_is_its_after_struct_else_its_before() -> None:
    schema = {"type": "struct", "fields": [row_struct(ID, field="before"), row_struct(ID, NAME, field="after")]}
    body = {"op": "c", "before": None, "after": {"id": 1, "name": "a"}, "source": {}}
    assert row_field_schemas(body, schema) == {"id": ID, "name": NAME}

    delete_schema = {"type": "struct", "fields": [row_struct(ID, field="before"), row_struct(field="after")]}
    assert row_field_schemas({**body, "op": "d"}, delete_schema) == {"id": ID}


def test_a_flattened_records_schema_less_the_transforms_fields() -> None:
    op = {"type": "string", "field": "__op"}
    schema = {"type": "struct", "name": "server.public.t.Value", "fields": [ID, NAME, op]}
    assert row_field_schemas({"id": 1, "name": "a", "__op": "c"}, schema) == {"id": ID, "name": NAME}


def test_without_a_schema_or_a_row_there_is_none() -> None:
    body = {"op": "c", "after": {"id": 1}, "source": {}}
    assert row_field_schemas(body, None) is None
    assert row_field_schemas(body, {"type": "struct", "fields": [{"type": "string", "field": "op"}]}) is None


def test_mongodb_documents_keep_their_extended_json() -> None:
    after = '{"_id": {"$oid": "65e500000000000000000001"}, "n": {"$numberLong": "7"}}'
    assert mongodb_documents({"op": "c", "after": after, "source": {}}) == [
        {"_id": {"$oid": "65e500000000000000000001"}, "n": {"$numberLong": "7"}}
    ]


def test_mongodb_updates_give_the_top_level_fields_they_set() -> None:
    oplog = {"op": "u", "patch": '{"$v": 1, "$set": {"n": {"$numberInt": "2"}, "votes.up": 5}}', "source": {}}
    assert mongodb_documents(oplog) == [{"n": {"$numberInt": "2"}}]
    described = {
        "op": "u",
        "updateDescription": {"updatedFields": '{"seen": true, "a.b": 1}', "removedFields": []},
        "source": {},
    }
    assert mongodb_documents(described) == [{"seen": True}]


def test_a_flattened_mongodb_record_is_its_own_document() -> None:
    assert mongodb_documents({"_id": 1, "n": 2, "__op": "c"}) == [{"_id": 1, "n": 2}]


def test_text_that_is_no_document_says_nothing() -> None:
    assert mongodb_documents({"op": "c", "after": "not json", "source": {}}) == []
