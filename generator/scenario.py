"""The scenario: the simulated PostgreSQL `inventory` database and the workload run against it.

`Workload` decides the stream, an initial snapshot then transaction by transaction, against
`Database` (current rows and realistic value factories), sized up front by `Plan`; it yields
`Change`s and `Transaction`s, which the connector (`postgres`) turns into records. Every
simulated source starts its stream at `STREAM_START`.
"""

import functools
import random
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from generator.inventory import (
    CUSTOMERS,
    NEW_KEY_HEADER,
    OLD_KEY_HEADER,
    ORDERS,
    PRODUCTS,
    TABLES,
    UNAVAILABLE_VALUE,
    Row,
    Table,
    canonical_key,
    wire_row,
)

MIN_EVENTS = 40
MIN_KEYS = 16

STREAM_START = datetime(2024, 3, 4, 8, 0, tzinfo=UTC)
"""When every simulated stream starts: this workload's, and the Qlik and MongoDB ones."""
STREAM_START_MS = int(STREAM_START.timestamp() * 1000)
"""`STREAM_START` in epoch milliseconds: where the Qlik and MongoDB streams' clocks start."""
_MS_PER_DAY = 86_400_000
T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# The database being simulated
# --------------------------------------------------------------------------------------------


class Dice(random.Random):
    """A seeded generator with cheap draws.

    `randint`/`choice` go through rejection sampling in pure Python; scaling `random()` is
    several times faster, and its bias (below 2**-40 here) is irrelevant for test data. What
    matters is determinism per seed, which both have.
    """

    def between(self, low: int, high: int) -> int:
        """Uniform integer in [low, high]."""
        return low + int(self.random() * (high - low + 1))

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        return int(self.random() * n)

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self.random() * len(options))]


class LiveRows:
    """Live rows of one table with O(1) insert, delete and uniform random choice."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.rows: dict[int, Row] = {}
        self._ids: list[int] = []
        self._index: dict[int, int] = {}
        self.next_id = table.first_id

    def __len__(self) -> int:
        return len(self._ids)

    def allocate_id(self) -> int:
        # Like a SERIAL column: ids are never reused, even after a truncate.
        row_id = self.next_id
        self.next_id += 1
        return row_id

    def put(self, row: Row) -> None:
        row_id = row["id"]
        if row_id not in self.rows:
            self._index[row_id] = len(self._ids)
            self._ids.append(row_id)
        self.rows[row_id] = row

    def remove(self, row_id: int) -> Row:
        index = self._index.pop(row_id)
        last = self._ids.pop()
        if last != row_id:  # move the last id into the hole
            self._ids[index] = last
            self._index[last] = index
        return self.rows.pop(row_id)

    def clear(self) -> None:
        self.rows.clear()
        self._ids.clear()
        self._index.clear()

    def random_id(self, rng: Dice) -> int:
        return self._ids[rng.below(len(self._ids))]


_FIRST_NAMES = (
    "Anne", "Sally", "George", "Edward", "José", "Zoë", "Søren", "Aiko",
    "Liam", "Priya", "Mateus", "Fatima", "Noah", "Olga", "Chen", "Amara",
)  # fmt: skip
_LAST_NAMES = (
    "Kretchmar", "Thomas", "Bailey", "Walker", "O'Brien", "Müller", "García",
    "Nakamura", "Okafor", "Kowalski", "Singh", "Dubois", "Haddad", "Lindqvist",
)  # fmt: skip
_DOMAINS = ("noanswer.org", "acme.com", "example.net", "walker.com", "mail.test")
# Descriptions include quotes, a backslash, a tab and non-ASCII text on purpose: they must
# survive the double JSON encoding of kcat lines.
_PRODUCTS = (
    ("scooter", "Small 2-wheel scooter"),
    ("car battery", "12V car battery"),
    ("12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3"),
    ("hammer", "12oz carpenter's hammer"),
    ("rocks", "box of assorted rocks"),
    ("jacket", "water resistent black wind breaker"),
    ("spare tire", "24 inch spare tire"),
    ("ruler", '12" steel ruler'),
    ("label maker", "prints C:\\labels\\ paths"),
    ("tent", "2-person tent\twith rain fly"),
    ("café table", "bistro table — solid oak"),
    ("lantern", None),
)
_CATALOG_DESCRIPTIONS = dict(_PRODUCTS)


@functools.cache
def _ascii_slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isascii() and ch.isalnum())


@dataclass(slots=True)
class Change:
    """One row-change event, in wire form, before it gets its position."""

    table: Table
    op: str
    row_id: int | None
    before: Row | None
    after: Row | None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Transaction:
    commit_ts_ms: int
    changes: list[Change]


class Database:
    """The simulated `inventory` database: current rows plus realistic value factories."""

    def __init__(self, rng: Dice) -> None:
        self.rng = rng
        self.live = {table.name: LiveRows(table) for table in TABLES}
        self.toast_updates = 0
        self.pk_changes = 0

    # -- row factories -----------------------------------------------------------------------

    def new_customer(self, ts_ms: int) -> Row:
        rng = self.rng
        row_id = self.live["customers"].allocate_id()
        first, last = rng.pick(_FIRST_NAMES), rng.pick(_LAST_NAMES)
        return {
            "id": row_id,
            "first_name": first,
            "last_name": last,
            "email": self._email(first, last, row_id),
            "updated_at": self._written_at(ts_ms),
        }

    def new_product(self) -> Row:
        rng = self.rng
        name, description = rng.pick(_PRODUCTS)
        if description is not None and rng.random() < 0.08:
            description = None
        return {
            "id": self.live["products"].allocate_id(),
            "name": name,
            "description": description,
            "weight": self._weight(),
            "price": self._price(),
        }

    def new_order(self, ts_ms: int) -> Row:
        rng = self.rng
        return {
            "id": self.live["orders"].allocate_id(),
            "order_date": ts_ms // _MS_PER_DAY - rng.between(0, 2),
            "purchaser": self.live["customers"].random_id(rng),
            "quantity": rng.between(1, 10),
            "product_id": self.live["products"].random_id(rng),
        }

    def new_row(self, table: Table, ts_ms: int) -> Row:
        if table is CUSTOMERS:
            return self.new_customer(ts_ms)
        if table is PRODUCTS:
            return self.new_product()
        return self.new_order(ts_ms)

    def _email(self, first: str, last: str, row_id: int) -> str:
        domain = self.rng.pick(_DOMAINS)
        return f"{_ascii_slug(first)}.{_ascii_slug(last)}{row_id % 997}@{domain}"

    def _written_at(self, ts_ms: int) -> int:
        # The row is written some time before its transaction commits.
        return ts_ms * 1000 - self.rng.between(150, 900_000)

    def _weight(self) -> float | None:
        # Grams over 1000: always a short decimal, so every JSON encoder prints it alike.
        return None if self.rng.random() < 0.1 else self.rng.between(50, 30_000) / 1000

    def _price(self) -> int:
        rng = self.rng
        roll = rng.random()
        if roll < 0.03:  # store credit: negative decimals exercise the two's complement sign
            return -rng.between(1, 50_000)
        if roll < 0.06:  # big-ticket items: up to 10 digits of precision
            return rng.between(10**7, 10**10 - 1)
        return rng.between(0, 99_999)

    # -- changes -------------------------------------------------------------------------------

    def create(self, table: Table, ts_ms: int) -> Change:
        row = self.new_row(table, ts_ms)
        self.live[table.name].put(row)
        return Change(table, "c", row["id"], None, wire_row(table, row))

    def update(self, table: Table, row_id: int, ts_ms: int) -> Change:
        live = self.live[table.name]
        row = dict(live.rows[row_id])
        wired_description: str | None = None
        if table is CUSTOMERS:
            self._change_customer(row, ts_ms)
        elif table is PRODUCTS:
            wired_description = self._change_product(row)
        else:
            self._change_order(row)
        live.put(row)
        after = wire_row(table, row)
        if wired_description is not None:
            after["description"] = wired_description
        return Change(table, "u", row_id, None, after)

    def _change_customer(self, row: Row, ts_ms: int) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.5:
            row["email"] = self._email(row["first_name"], row["last_name"], row["id"])
        elif roll < 0.8:
            row["last_name"] = rng.pick(_LAST_NAMES)
        else:
            row["first_name"] = rng.pick(_FIRST_NAMES)
        row["updated_at"] = self._written_at(ts_ms)

    def _change_product(self, row: Row) -> str | None:
        """Change a product; return the TOAST placeholder when the update carries it."""
        rng = self.rng
        if row["description"] is not None and rng.random() < 0.25:
            # An update not touching the TOASTed description: Debezium cannot read it.
            row["price"] = self._price()
            self.toast_updates += 1
            return UNAVAILABLE_VALUE
        roll = rng.random()
        if roll < 0.4:
            row["price"] = self._price()
        elif roll < 0.7:
            row["weight"] = self._weight()
        else:
            catalog = _CATALOG_DESCRIPTIONS.get(row["name"]) or row["name"]
            row["description"] = f"{catalog} (rev {rng.between(2, 9)})"
        return None

    def _change_order(self, row: Row) -> None:
        rng = self.rng
        if rng.random() < 0.7:
            row["quantity"] = rng.between(1, 10)
        else:
            row["purchaser"] = self.live["customers"].random_id(rng)

    def delete(self, table: Table, row_id: int) -> Change:
        self.live[table.name].remove(row_id)
        return Change(table, "d", row_id, _key_only_before(table, row_id), None)

    def change_primary_key(self, table: Table, old_id: int, ts_ms: int) -> list[Change]:
        """`UPDATE ... SET id = <new>`: Debezium emits a delete of the old key, then a create."""
        live = self.live[table.name]
        row = dict(live.remove(old_id))
        row["id"] = live.allocate_id()
        if table is CUSTOMERS:
            row["updated_at"] = self._written_at(ts_ms)
        live.put(row)
        self.pk_changes += 1
        old_key, new_key = canonical_key(old_id), canonical_key(row["id"])
        # Both at consecutive LSNs of one transaction (the connector gives each event its own).
        delete = Change(table, "d", old_id, _key_only_before(table, old_id), None, ((NEW_KEY_HEADER, new_key),))
        create = Change(table, "c", row["id"], None, wire_row(table, row), ((OLD_KEY_HEADER, old_key),))
        return [delete, create]

    def truncate(self, table: Table) -> Change:
        self.live[table.name].clear()
        return Change(table, "t", None, None, None)


def _key_only_before(table: Table, row_id: int) -> Row:
    # REPLICA IDENTITY DEFAULT: the old tuple carries only the key; the rest is null.
    return {column.name: (row_id if column.name == "id" else None) for column in table.columns}


# --------------------------------------------------------------------------------------------
# The workload: which changes happen, in which transactions
# --------------------------------------------------------------------------------------------

_SNAPSHOT_SHARE = {"customers": 0.3, "products": 0.2}  # orders take the rest
_CREATE_WEIGHTS = ((CUSTOMERS, 0.3), (PRODUCTS, 0.2), (ORDERS, 0.5))
_UPDATE_WEIGHTS = ((CUSTOMERS, 0.3), (PRODUCTS, 0.3), (ORDERS, 0.4))
_TRY_ORDER = {first.name: (first, *(t for t in TABLES if t is not first)) for first in TABLES}
"""When a table has no row to update, try the others in this order."""
_DELETE_SHARE = 0.04
SNAPSHOT_ROWS_PER_MS = 40
"""How fast the connector's snapshot reads rows: streaming starts after it (and `postgres` spaces
the snapshot records' `source.ts_ms` by it)."""
_TRUNCATE_AT = 0.6  # fraction of the streaming phase
_TRUNCATE_COST = 3  # the truncate, then a transaction of two fresh orders
_PK_CHANGE_COST = 2
_PK_CHANGE_EVERY = 100_000  # streaming events per primary-key change (at least one)


@dataclass(frozen=True)
class Plan:
    """How many events of each kind, fixed up front so `events` and `keys` are met."""

    snapshot: dict[str, int]
    stream_events: int
    random_creates: int
    pk_changes: int

    @classmethod
    def for_size(cls, events: int, keys: int) -> "Plan":
        if events < MIN_EVENTS:
            raise ValueError(f"events must be at least {MIN_EVENTS}, got {events}")
        if not MIN_KEYS <= keys <= events:
            raise ValueError(f"keys must be between {MIN_KEYS} and events ({events}), got {keys}")
        snapshot_total = max(6, keys // 2)
        customers = max(2, round(snapshot_total * _SNAPSHOT_SHARE["customers"]))
        products = max(2, round(snapshot_total * _SNAPSHOT_SHARE["products"]))
        snapshot = {
            "customers": customers,
            "products": products,
            "orders": snapshot_total - customers - products,
        }
        stream_events = events - snapshot_total
        pk_changes = 1 + stream_events // _PK_CHANGE_EVERY
        # Each primary-key change and the two post-truncate orders bring a new key too.
        random_creates = keys - snapshot_total - pk_changes - 2
        return cls(snapshot, stream_events, max(0, random_creates), pk_changes)


class Workload:
    """Decides the stream, transaction by transaction, against the simulated database."""

    def __init__(self, rng: Dice, plan: Plan) -> None:
        self.rng = rng
        self.plan = plan
        self.db = Database(rng)
        self.ts_ms = int(STREAM_START.timestamp() * 1000)
        self._creates_left = plan.random_creates
        self._pk_tables = [CUSTOMERS, PRODUCTS]

    def snapshot(self) -> tuple[list[Change], int]:
        """The initial rows as `r` events, and the time the snapshot started reading them."""
        changes = []
        for table in TABLES:
            for _ in range(self.plan.snapshot[table.name]):
                # Rows were written over the weeks before the snapshot.
                written = self.ts_ms - self.rng.between(3_600_000, 60 * _MS_PER_DAY)
                row = self.db.new_row(table, written)
                self.db.live[table.name].put(row)
                changes.append(Change(table, "r", row["id"], None, wire_row(table, row)))
        started = self.ts_ms
        # Streaming starts after the snapshot finished reading.
        self.ts_ms += len(changes) // SNAPSHOT_ROWS_PER_MS + 1000
        return changes, started

    def stream(self) -> Iterator[Transaction]:
        """Streaming transactions until exactly `plan.stream_events` events were produced."""
        total = self.plan.stream_events
        specials = self._special_schedule(total)
        done = 0
        while done < total:
            remaining = total - done
            reserved = sum(cost for _, _, cost in specials)
            if specials and (specials[0][0] <= done or remaining <= reserved):
                _, kind, _ = specials.popleft()
                transactions = self._special(kind)
            else:
                size = min(self.rng.between(1, 4), remaining - reserved)
                transactions = [self._random_transaction(size, remaining - reserved)]
            for transaction in transactions:
                done += len(transaction.changes)
                yield transaction

    def _special_schedule(self, total: int) -> deque[tuple[int, str, int]]:
        """Positions (in streaming events) of the truncate and the primary-key changes."""
        schedule = [(int(total * _TRUNCATE_AT), "truncate", _TRUNCATE_COST)]
        for n in range(self.plan.pk_changes):
            at = int(total * (0.25 + 0.7 * n / self.plan.pk_changes))
            schedule.append((at, "pk_change", _PK_CHANGE_COST))
        return deque(sorted(schedule))

    def _tick(self) -> int:
        # Commit timestamps: one busy OLTP database, tens of ms to ~1.5 s between commits.
        self.ts_ms += self.rng.between(15, 1500)
        return self.ts_ms

    def _special(self, kind: str) -> list[Transaction]:
        ts_ms = self._tick()
        if kind == "truncate":
            truncate = Transaction(ts_ms, [self.db.truncate(ORDERS)])
            refill_ts = self._tick()
            refill = [self.db.create(ORDERS, refill_ts) for _ in range(2)]
            return [truncate, Transaction(refill_ts, refill)]
        table = self._pk_tables[self.db.pk_changes % len(self._pk_tables)]
        old_id = self.db.live[table.name].random_id(self.rng)
        return [Transaction(ts_ms, self.db.change_primary_key(table, old_id, ts_ms))]

    def _random_transaction(self, size: int, normal_left: int) -> Transaction:
        ts_ms = self._tick()
        changes: list[Change] = []
        touched: set[tuple[str, int]] = set()  # one event per row and transaction
        for slot in range(size):
            left = normal_left - slot
            create_share = self._creates_left / left if left > 0 else 0.0
            roll = self.rng.random()
            change: Change | None
            if roll < create_share:
                self._creates_left -= 1
                change = self.db.create(self._weighted(_CREATE_WEIGHTS), ts_ms)
            elif roll < create_share + _DELETE_SHARE:
                change = self._delete(touched) or self._update(touched, ts_ms)
            else:
                change = self._update(touched, ts_ms)
            if change is not None:
                touched.add((change.table.name, change.row_id or 0))
                changes.append(change)
        return Transaction(ts_ms, changes)

    def _weighted(self, weights: tuple[tuple[Table, float], ...]) -> Table:
        roll = self.rng.random()
        for table, weight in weights:
            roll -= weight
            if roll < 0:
                return table
        return weights[-1][0]

    def _pick(self, table: Table, touched: set[tuple[str, int]]) -> int | None:
        live = self.db.live[table.name]
        for _ in range(4):
            if not live:
                return None
            row_id = live.random_id(self.rng)
            if (table.name, row_id) not in touched:
                return row_id
        return None

    def _update(self, touched: set[tuple[str, int]], ts_ms: int) -> Change | None:
        first = self._weighted(_UPDATE_WEIGHTS)
        for table in _TRY_ORDER[first.name]:
            row_id = self._pick(table, touched)
            if row_id is not None:
                return self.db.update(table, row_id, ts_ms)
        return None

    def _delete(self, touched: set[tuple[str, int]]) -> Change | None:
        table = self._weighted(_CREATE_WEIGHTS)
        # Keep a few rows per table so updates, key changes and new orders always find some.
        if len(self.db.live[table.name]) <= 3:
            return None
        row_id = self._pick(table, touched)
        return self.db.delete(table, row_id) if row_id is not None else None
