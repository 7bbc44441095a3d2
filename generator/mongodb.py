"""A Debezium 2.x MongoDB connector (`capture.mode=change_streams`, no full document lookup) on `shop.reviews`.

A snapshot, inserts, updates that carry only `updateDescription` (set, nested paths, removed
fields, truncated arrays), deletes with their tombstones. Small, written as kcat JSON lines;
`simulate_mongodb` returns the collection's final state.
"""

import json
import random

from generator.kafka import KcatWriter
from generator.oracle import Row, canonical
from generator.scenario import STREAM_START_MS

MONGO_TOPIC = "mongo1.shop.reviews"
MONGO_COLLECTION = "shop.reviews"

_TAGS = ("fast", "sturdy", "cheap", "pretty", "loud", "light")


class MongoConnector:
    """Emits what the Debezium 2.x MongoDB connector writes; `documents` is the true state."""

    def __init__(self, rng: random.Random, writer: KcatWriter) -> None:
        self.rng = rng
        self.writer = writer
        self.documents: dict[str, Row] = {}
        self.ts_ms = STREAM_START_MS
        self.second = 0
        self.ord = 0

    def new_document(self, number: int) -> Row:
        object_id = f"65e5{number:020x}"
        return {
            "_id": object_id,
            "product_id": self.rng.randint(101, 109),
            "rating": self.rng.randint(1, 5),
            "text": f"review {number}",
            "tags": self.rng.sample(_TAGS, self.rng.randint(1, 3)),
            "votes": {"up": self.rng.randint(0, 9), "down": self.rng.randint(0, 9)},
        }

    def read(self, document: Row, snapshot: str) -> None:
        self.documents[document["_id"]] = document
        self._emit("r", document["_id"], {"after": _extended(document)}, snapshot)

    def insert(self, document: Row) -> None:
        self.documents[document["_id"]] = document
        self._emit("c", document["_id"], {"after": _extended(document)})

    def update(self, object_id: str) -> None:
        document = self.documents[object_id]
        updated: Row = {"rating": self.rng.randint(1, 5), "votes.up": document["votes"]["up"] + self.rng.randint(1, 3)}
        removed = ["text"] if "text" in document and self.rng.random() < 0.3 else []
        truncated = []
        if len(document["tags"]) > 1 and self.rng.random() < 0.5:
            truncated = [{"field": "tags", "size": 1}]
            document["tags"] = document["tags"][:1]
        document["rating"] = updated["rating"]
        document["votes"] = {**document["votes"], "up": updated["votes.up"]}
        for name in removed:
            del document[name]
        description = {
            "updatedFields": json.dumps(
                {"rating": {"$numberInt": str(updated["rating"])}, "votes.up": updated["votes.up"]}
            ),
            "removedFields": removed,
            "truncatedArrays": truncated,
        }
        self._emit("u", object_id, {"after": None, "updateDescription": description})

    def delete(self, object_id: str) -> None:
        del self.documents[object_id]
        self._emit("d", object_id, {"after": None})
        self.writer.emit(MONGO_TOPIC, _mongo_key(object_id), None, self.ts_ms + 5)

    def _emit(self, op: str, object_id: str, images: Row, snapshot: str = "false") -> None:
        self.ts_ms += self.rng.randint(200, 2000)
        # The oplog's clock has seconds; `ord` orders the operations within one second.
        second = self.ts_ms // 1000
        self.ord = self.ord + 1 if second == self.second else 1
        self.second = second
        source = {
            "version": "2.5.4.Final",
            "connector": "mongodb",
            "name": "mongo1",
            "ts_ms": second * 1000,
            "snapshot": snapshot,
            "db": "shop",
            "sequence": None,
            "collection": "reviews",
            "ord": self.ord,
            "lsid": None,
            "txnNumber": None,
        }
        payload = {"before": None, **images, "source": source, "op": op, "ts_ms": self.ts_ms + 4, "transaction": None}
        if "updateDescription" not in payload:
            payload["updateDescription"] = None
        self.writer.emit(MONGO_TOPIC, _mongo_key(object_id), json.dumps(payload, separators=(",", ":")), self.ts_ms + 5)


def _extended(document: Row) -> str:
    """The document as the connector writes it: Extended JSON text (relaxed, `$oid` wrapped)."""
    return json.dumps(
        {**document, "_id": {"$oid": document["_id"]}, "product_id": {"$numberLong": str(document["product_id"])}}
    )


def _mongo_key(object_id: str) -> str:
    return json.dumps({"id": json.dumps({"$oid": object_id})}, separators=(",", ":"))


def simulate_mongodb(rng: random.Random, writer: KcatWriter, reviews: int, changes: int) -> dict[str, Row]:
    connector = MongoConnector(rng, writer)
    numbers = iter(range(1, 10_000))
    for position in range(reviews):
        snapshot = "last" if position == reviews - 1 else ("first" if position == 0 else "true")
        connector.read(connector.new_document(next(numbers)), snapshot)
    for _ in range(changes):
        draw = rng.random()
        if draw < 0.25 or len(connector.documents) < 3:
            connector.insert(connector.new_document(next(numbers)))
        elif draw < 0.85:
            connector.update(rng.choice(sorted(connector.documents)))
        else:
            connector.delete(rng.choice(sorted(connector.documents)))
    return {canonical({"_id": object_id}): document for object_id, document in connector.documents.items()}
