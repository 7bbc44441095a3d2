"""The worker daemon's fix: a zip archive is re-read on cache invalidation only when it changed."""

import zipfile
import zipimport
from pathlib import Path
from typing import Any

from cdc_dbt.python_worker import skip_unchanged_archives


def write_archive(path: Path, modules: list[str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for module in modules:
            archive.writestr(f"{module}.py", f"NAME = {module!r}\n")


def counting_invalidation(reads: list[str]) -> Any:
    def invalidate(importer: zipimport.zipimporter) -> None:
        reads.append(importer.archive)
        zipimport.zipimporter.invalidate_caches(importer)

    return skip_unchanged_archives(invalidate)


def test_an_unchanged_archive_is_read_once(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    write_archive(archive, ["first"])
    importer = zipimport.zipimporter(str(archive))
    reads: list[str] = []
    invalidate = counting_invalidation(reads)

    for _ in range(5):
        invalidate(importer)

    assert reads == [str(archive)]
    assert importer.find_spec("first") is not None


def test_a_changed_archive_is_read_again_and_its_new_modules_found(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    write_archive(archive, ["first"])
    importer = zipimport.zipimporter(str(archive))
    reads: list[str] = []
    invalidate = counting_invalidation(reads)
    invalidate(importer)
    assert importer.find_spec("second") is None

    write_archive(archive, ["first", "second"])
    invalidate(importer)

    assert len(reads) == 2
    assert importer.find_spec("second") is not None


def test_a_vanished_archive_is_left_to_the_original(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    write_archive(archive, ["first"])
    importer = zipimport.zipimporter(str(archive))
    reads: list[str] = []
    invalidate = counting_invalidation(reads)
    archive.unlink()

    invalidate(importer)
    invalidate(importer)

    assert len(reads) == 2
