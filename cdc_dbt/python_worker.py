"""PySpark's Python worker daemon, without re-reading unchanged zip archives at every task.

Spark starts Python workers through `spark.python.daemon.module`; this module is that daemon.
At the start of every task PySpark's worker calls `importlib.invalidate_caches()` so that files
added with `addPyFile` become importable. On Python 3.10 and 3.11 that call makes every cached
`zipimporter` re-read its whole archive directory at once: `pyspark.zip` (1,300 entries), the
py4j zip and a Spark jar, once per importer. Measured here: 0.4 to 1.2 s of a core per task, more
than a whole small task's work (bench/README.md). Python 3.12 made the re-read lazy.

The fix keeps the invalidation and skips only the re-read of an archive whose size and
modification time have not changed since its importer last read it, which is exactly when the
re-read finds nothing new. Everything else is PySpark's own daemon.
"""

import os
import sys
import zipimport
from collections.abc import Callable
from typing import Any

_ARCHIVE_STAMP = "_cdc_archive_stamp"
"""Attribute a zipimporter keeps the (size, mtime) of the archive it last read in."""


def archive_stamp(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns)


def skip_unchanged_archives(invalidate: Callable[[Any], None]) -> Callable[[Any], None]:
    """Wrap `zipimporter.invalidate_caches` so it re-reads an archive only when it changed."""

    def invalidate_if_changed(importer: Any) -> None:
        stamp = archive_stamp(importer.archive)
        if stamp is not None and getattr(importer, _ARCHIVE_STAMP, None) == stamp:
            return
        invalidate(importer)
        setattr(importer, _ARCHIVE_STAMP, stamp)

    return invalidate_if_changed


def install() -> None:
    # Only the pure-Python zipimporter of 3.10 and 3.11 re-reads eagerly; leave others alone.
    if (3, 10) <= sys.version_info[:2] < (3, 12):
        zipimport.zipimporter.invalidate_caches = skip_unchanged_archives(  # type: ignore[method-assign,assignment]
            zipimport.zipimporter.invalidate_caches
        )


if __name__ == "__main__":
    install()
    from pyspark import daemon

    daemon.manager()  # type: ignore[no-untyped-call]
