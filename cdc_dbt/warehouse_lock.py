"""One `cdc-dbt` process at a time on a warehouse: its embedded Derby metastore admits one.

A second process used to find out deep inside Spark, as 25,000 lines of Derby traces. Each
process that starts Spark on a warehouse first takes an exclusive lock on a file in it, writing
who holds it; the operating system releases the lock when the process ends, however it ends, so a
killed build never leaves the warehouse locked.
"""

import datetime as dt
import fcntl
import os
from pathlib import Path
from typing import IO

LOCK_FILE = "cdc-dbt.lock"


class WarehouseInUseError(RuntimeError):
    """Another process holds the warehouse."""


def hold_warehouse(warehouse_dir: Path, command: str) -> IO[str]:
    """Lock `warehouse_dir` for this process (creating the folder) and return the open lock file,
    which holds the lock until it is closed or the process ends; raise WarehouseInUseError, naming
    the holder, when another process has it."""
    warehouse_dir.mkdir(parents=True, exist_ok=True)
    lock = (warehouse_dir / LOCK_FILE).open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        lock.close()
        raise WarehouseInUseError(
            f"the warehouse {warehouse_dir} is in use by {holder}: wait for it to finish, then run this again"
        ) from None
    lock.seek(0)
    lock.truncate()
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lock.write(f"process {os.getpid()} (cdc-dbt {command}, since {started})")
    lock.flush()
    return lock


def warehouse_holder(warehouse_dir: Path) -> str | None:
    """Who holds `warehouse_dir` now (as `hold_warehouse` wrote it), or None when no process does;
    it never takes the lock for longer than the look, nor creates the warehouse."""
    lock_path = warehouse_dir / LOCK_FILE
    if not lock_path.is_file():
        return None
    with lock_path.open("r") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return lock.read().strip() or "another process"
        fcntl.flock(lock, fcntl.LOCK_UN)
    return None
