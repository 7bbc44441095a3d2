"""Settings and prerequisites of the `cdc-dbt` command (no JVM started)."""

from pathlib import Path

import pytest

from cdc_dbt import cli, session
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, find_project_dir, load_settings, profiles_dir_of


def test_defaults_live_under_the_project(tmp_path: Path) -> None:
    settings = load_settings(environ={}, cwd=PACKAGE_PROJECT_DIR / "models")
    assert settings.project_dir == PACKAGE_PROJECT_DIR
    assert settings.landing_dir == PACKAGE_PROJECT_DIR / "demo" / "landing"
    assert settings.warehouse_dir == PACKAGE_PROJECT_DIR / ".warehouse"
    assert settings.master_url is None
    assert settings.schema == "cdc"


def test_environment_overrides_each_setting(tmp_path: Path) -> None:
    environ = {
        "CDC_LANDING_DIR": str(tmp_path / "landing"),
        "CDC_WAREHOUSE_DIR": str(tmp_path / "warehouse"),
        "SPARK_MASTER_URL": "spark://127.0.0.1:7077",
        "CDC_SCHEMA": "analytics",
    }
    settings = load_settings(environ=environ, cwd=tmp_path)
    assert (settings.landing_dir, settings.warehouse_dir) == (tmp_path / "landing", tmp_path / "warehouse")
    assert settings.tables_dir == tmp_path / "warehouse" / "tables"
    assert settings.metastore_dir == tmp_path / "warehouse" / "metastore_db"
    assert settings.master_url == "spark://127.0.0.1:7077"
    assert settings.schema == "analytics"


def test_project_dir_is_found_upwards_else_this_checkout(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text("name: other\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_project_dir(tmp_path / "a" / "b") == tmp_path
    assert find_project_dir(Path("/")) == PACKAGE_PROJECT_DIR


def test_a_users_project_without_profiles_runs_on_cdc_dbts_profile(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text("name: shop_analytics\nprofile: cdc_dbt\n")
    settings = load_settings(environ={}, cwd=tmp_path)
    assert (settings.project_dir, settings.profiles_dir) == (tmp_path, PACKAGE_PROJECT_DIR)
    assert settings.warehouse_dir == tmp_path / ".warehouse"
    (tmp_path / "profiles.yml").write_text("cdc_dbt: {}\n")
    assert profiles_dir_of(tmp_path) == tmp_path


def test_missing_java_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    (tmp_path / "tables").mkdir()  # a warehouse that exists: the query gets as far as Java
    monkeypatch.setenv("CDC_WAREHOUSE_DIR", str(tmp_path))
    with pytest.raises(session.JavaMissingError, match="Java 17"):
        session.require_java()
    assert cli.main(["sql", "select 1"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("cdc-dbt: Java 17 or newer is needed") and len(error.strip().splitlines()) == 1


def test_usage_without_arguments_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "cdc-dbt sql" in captured.err


@pytest.mark.parametrize(
    ("args", "environ", "left_out"),
    [
        (["build"], {}, True),
        (["--warn-error", "test", "--select", "cdc_current"], {}, True),
        (["run"], {}, False),  # runs no tests of any kind
        (["test", "--select", "test_type:unit"], {}, False),
        (["build", "--select", "resource_type:unit_test"], {}, False),
        (["build", "--resource-type", "model"], {}, False),
        (["build", "--exclude-resource-type", "test"], {}, False),
        (["build"], {"DBT_EXCLUDE_RESOURCE_TYPES": "source"}, False),
    ],
)
def test_builds_leave_unit_tests_out_unless_the_command_chooses(
    args: list[str], environ: dict[str, str], left_out: bool
) -> None:
    assert cli.leaves_out_unit_tests(args, environ) is left_out


@pytest.mark.parametrize(
    ("args", "environ", "only_selected"),
    [
        (["show", "--select", "cdc_current"], {}, True),
        (["--quiet", "show", "--inline", "select 1"], {}, True),
        (["build", "--select", "cdc_current"], {}, False),  # a build runs the tests of what it builds
        (["compile", "--select", "cdc_current"], {}, False),
        (["show", "--select", "cdc_current", "--indirect-selection", "eager"], {}, False),
        (["show", "--select", "cdc_current", "--indirect-selection=cautious"], {}, False),
        (["show", "--select", "cdc_current"], {"DBT_INDIRECT_SELECTION": "eager"}, False),
    ],
)
def test_show_leaves_out_the_tests_of_what_it_shows_unless_the_command_chooses(
    args: list[str], environ: dict[str, str], only_selected: bool
) -> None:
    assert cli.shows_only_what_it_selects(args, environ) is only_selected
