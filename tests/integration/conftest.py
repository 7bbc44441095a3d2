"""One SparkSession for every Spark test of a pytest process (each pytest-xdist worker has its own);
dbt builds run inside it through dbtRunner.

A JVM starts once per process (about 20 s); each later build costs seconds. Each build gets its
own target schema and landing schema, so results of several builds can be compared side by side.

The test inputs are tiny (hundreds to a few thousand records), so a build's time is the fixed
cost of its ~200 Spark queries, not data: Spark is sized for that here (SMALL_INPUT_SPARK_CONF),
for this process and for every `cdc-dbt` process a test starts, and dbt runs independent nodes
on several threads. `tests/integration/test_cli.py` runs one build with the product's own
configuration.
"""

import atexit
import hashlib
import importlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyspark.sql import SparkSession

if TYPE_CHECKING:
    from tests.real_parts.kafka_broker import KafkaBroker

from cdc_dbt.project_files import copy_dbt_project
from cdc_dbt.session import SPARK_CONF_DIR, build_session
from cdc_dbt.settings import PACKAGE_PROJECT_DIR, Settings, profiles_dir_of
from tests.build_times import BUILD_TIMES, build_time
from tests.kcat import write_kcat_file

SMALL_INPUT_SPARK_CONF = {
    # Compiling a query's generated Java (and then JIT-compiling it) costs more than running it
    # on a few hundred rows: a data test's query runs 1.5-3x faster interpreted.
    "spark.sql.codegen.wholeStage": "false",
    # The expression code each query generates is the same for the same model or test in every
    # build: keep all of it compiled (Spark keeps 100), a demo build is then about 10% faster. The
    # suite's own session interprets expressions instead (SUITE_SESSION_JVM).
    "spark.sql.codegen.cache.maxEntries": "5000",
    # Re-planning each stage after its shuffle pays off on data, not on tests' small inputs.
    "spark.sql.adaptive.enabled": "false",
    # Delta's data skipping plans each scan of a Delta table by a Spark job over its files' stats:
    # on tables of a few files that job is most of the planning (the cdc_transactions view's plan
    # took 2-4 s with it, 1 s without). It never changes what a query returns.
    "spark.databricks.delta.stats.skipping": "false",
    # Every scan of a Delta table still collects its files from the snapshot's cached state, by a
    # Spark job (18 % of a warm build's JVM samples, JFR). Kept as objects, not serialized bytes,
    # that job reads them without deserializing each time.
    "spark.databricks.delta.snapshotCache.storageLevel": "MEMORY_ONLY",
    # A broadcast join is one more job, its relation serialized and shipped, for a side of a few
    # hundred rows; sort-merge joins on one shuffle partition cost less here. With the setting
    # above: a warm demo build runs 0.80x the Spark jobs; its time 0.84x, 0.93x and 1.04x in three
    # runs, within the machine's noise (bench/spark_settings.py).
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    # One: the concurrency is dbt's 4 threads', so a second partition of a few hundred rows only
    # adds a task per stage (a warm demo build 0.88x the time of two partitions, in four builds
    # each). The cluster test shuffles into 2 partitions across its executor, and test_cli.py
    # into the product's 8.
    "spark.sql.shuffle.partitions": "1",
    # One session runs every build of the suite, tens of thousands of small jobs: Spark's default
    # 1 GiB driver filled up with their bookkeeping and spent its time collecting garbage.
    "spark.driver.memory": "3g",
    "spark.ui.retainedJobs": "50",
    "spark.ui.retainedStages": "50",
    "spark.sql.ui.retainedExecutions": "20",
    # The `cdc-dbt` JVMs a test starts live a build or two: the C2 compiler's optimised code
    # never pays back what compiling it costs (a cold demo build spent ~47 of its ~150
    # CPU-seconds in C2, JFR's ThreadCPULoad). C1 alone: the build in ~0.65x the CPU time.
    # Its compiled code outgrows the default code cache, which then stops compiling. The
    # suite's own session, which runs every in-process build, keeps C2 (SUITE_SESSION_JVM).
    "spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
    "spark.executor.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}
SUITE_SESSION_JVM = {
    "spark.driver.defaultJavaOptions": "-XX:ReservedCodeCacheSize=512m",
    # After one demo build ~0.9 GiB stays live (jcmd GC.class_histogram; as much after four builds,
    # so no leak), and the last tests, which collect two schemas' every row, ran out of 3 GiB in CI.
    "spark.driver.memory": "6g",
    # Spark's own in-memory catalog, not the Hive metastore in Derby that `cdc-dbt` keeps: every
    # table, view and schema a build creates or lists costs a metastore call, and a warm demo build
    # took 0.72x the time without them (29.6 s against 42.8). Nothing outside this process reads
    # the suite's warehouse by its catalog; the tests that start `cdc-dbt` (test_cli.py, the README's
    # commands, the warm server, killed builds, land, Iceberg) run on the product's metastore.
    "spark.sql.catalogImplementation": "in-memory",
    # Expressions interpreted, never compiled to Java (an internal setting; Spark's own tests run
    # both paths for the same results): no class to generate, compile and then JIT-compile per
    # query. Six Spark test modules in one process, busy CPU-seconds of the machine: 446 against
    # 458-511 in three runs compiled (2026-12-07). The `cdc-dbt` processes tests start keep the
    # product's compiled expressions.
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""The suite's session lives the whole run (over 40 builds): C2's code pays back there. Its
catalog lives with it."""
DBT_THREADS = 4
"""Independent models and data tests run concurrently on the one SparkSession: while one query
waits on its tasks, another is planned."""


def small_input_spark_conf_dir() -> Path:
    """A SPARK_CONF_DIR with the project's logging and SMALL_INPUT_SPARK_CONF as defaults."""
    folder = Path(tempfile.mkdtemp(prefix="cdc-dbt-test-spark-conf-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    shutil.copy(SPARK_CONF_DIR / "log4j2.properties", folder)
    (folder / "spark-defaults.conf").write_text(
        "".join(f"{name} {value}\n" for name, value in SMALL_INPUT_SPARK_CONF.items())
    )
    return folder


# Set at import, before any JVM starts: this process's session and the `cdc-dbt` processes tests
# start (they inherit the environment) read their Spark defaults from here.
os.environ["SPARK_CONF_DIR"] = str(small_input_spark_conf_dir())
os.environ["CDC_SHUFFLE_PARTITIONS"] = SMALL_INPUT_SPARK_CONF["spark.sql.shuffle.partitions"]


@dataclass
class Build:
    """The tables of one dbt build, queried through the shared session."""

    spark: SparkSession
    schema: str

    def rows(self, query: str) -> list[dict[str, Any]]:
        """Run a query whose `{schema}` placeholder names this build's schema."""
        return [row.asDict(recursive=True) for row in self.spark.sql(query.format(schema=self.schema)).collect()]

    def table(self, name: str) -> list[dict[str, Any]]:
        return self.rows(f"select * from `{{schema}}`.`{name}`")


@dataclass
class DbtProject:
    spark: SparkSession
    target_dir: Path
    """Holds a target folder per schema, project and vars (target_of)."""
    last_target: Path = Path()
    """The target folder of the last dbt command: its manifest, run results and compiled SQL."""

    def target_of(self, schema: str, variables: dict[str, Any], project_dir: Path) -> Path:
        """The target folder of dbt commands of `schema`, `variables` and `project_dir`. dbt parses
        the whole project again (3 s) when any of them differs from its target's last parse, so a
        command that repeats them keeps its own target, whose parse dbt only updates."""
        identity = json.dumps([schema, variables, str(project_dir)], sort_keys=True)
        return self.target_dir / f"{schema}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"

    def build(
        self,
        landing_dir: Path,
        schema: str,
        variables: dict[str, Any] | None = None,
        *,
        example_marts: bool = False,
        data_tests: bool = True,
        unit_tests: bool = False,
        select: str | None = None,
        full_refresh: bool = False,
        project_dir: Path = PACKAGE_PROJECT_DIR,
        warn_error: bool = False,
        said: list[str] | None = None,
    ) -> Build:
        """`dbt build` of `landing_dir` into `schema`. `example_marts` adds the demo's typed marts, for a
        landing that holds their tables (the product builds them only for the demo). Data tests are
        included unless `data_tests` is false (for a build whose tables a test proves equal to another
        build's, whose data tests ran); dbt unit tests only when asked, since they do not depend on the
        landed data. `select` narrows the build (dbt's --select). A second build into the same schema
        is incremental, unless `full_refresh`. `project_dir`: another copy of the project (a user's);
        `warn_error`: a dbt warning fails the build; `said`: gets the message of each event dbt fires
        (the build summary's lines and warnings among them)."""
        from dbt.cli.main import dbtRunner

        excluded = [*([] if data_tests else ["test"]), *([] if unit_tests else ["unit_test"])]
        all_variables = {"example_marts": example_marts, **(variables or {})}
        args = [
            *(["--warn-error"] if warn_error else []),
            "build",
            *self._project_args(landing_dir, schema, all_variables, project_dir),
            "--threads", str(DBT_THREADS),
            *(["--exclude-resource-type", *excluded] if excluded else []),
            *([] if select is None else ["--select", select]),
            *(["--full-refresh"] if full_refresh else []),
        ]  # fmt: skip
        run_results = self.last_target / "run_results.json"
        run_results.unlink(missing_ok=True)  # a build that fails early must not report the previous one's nodes
        started = time.monotonic()
        callbacks = [] if said is None else [lambda event: said.append(event.info.msg)]
        result = dbtRunner(callbacks=callbacks).invoke(args)
        BUILD_TIMES.append(build_time(schema, time.monotonic() - started, run_results))
        if not result.success:
            failures = [
                f"{node.node.name}: {node.message}"
                for node in (result.result or [])
                if getattr(node, "status", None) not in ("success", "pass")
            ]
            raise AssertionError(f"dbt build failed: {result.exception or failures}")
        return Build(self.spark, schema)

    def compile_inline(self, sql: str, schema: str) -> str:
        """The SQL dbt compiles `sql` (Jinja, refs to `schema`'s models) into: `dbt compile --inline`."""
        from dbt.cli.main import dbtRunner

        result = dbtRunner().invoke(["compile", "--inline", sql, *self._project_args(Path("."), schema, {})])
        assert result.success, result.exception
        return str(result.result.results[0].node.compiled_code)

    def compile_model(self, name: str, landing_dir: Path, schema: str, variables: dict[str, Any]) -> str:
        """The SQL a full refresh of model `name` into `schema` runs: `dbt compile --full-refresh`."""
        from dbt.cli.main import dbtRunner

        args = ["compile", "--select", name, "--full-refresh", *self._project_args(landing_dir, schema, variables)]
        result = dbtRunner().invoke(args)
        assert result.success, result.exception
        [compiled] = [node.node.compiled_code for node in result.result.results if node.node.name == name]
        return str(compiled)

    def source_freshness(self, landing_dir: Path, schema: str, variables: dict[str, Any]) -> dict[str, Any]:
        """`dbt source freshness` of `landing_dir`: each source's result (dbt's sources.json), by name."""
        from dbt.cli.main import dbtRunner

        args = ["source", "freshness", *self._project_args(landing_dir, schema, variables)]
        output = self.last_target / "sources.json"  # where dbt writes it (a custom --output is deprecated)
        output.unlink(missing_ok=True)
        dbtRunner().invoke(args)
        results = json.loads(output.read_text())["results"]
        return {result["unique_id"].rsplit(".", 1)[-1]: result for result in results}

    def _project_args(
        self, landing_dir: Path, schema: str, variables: dict[str, Any], project_dir: Path = PACKAGE_PROJECT_DIR
    ) -> list[str]:
        """What every dbt command of a test names: the landing and schema (through the environment
        the project reads), the project, the local target, its target folder (target_of), the vars."""
        os.environ["CDC_LANDING_DIR"] = str(landing_dir)
        os.environ["CDC_SCHEMA"] = schema
        all_variables = {"landing_schema": f"{schema}_landing", **variables}
        self.last_target = self.target_of(schema, all_variables, project_dir)
        return [
            "--project-dir", str(project_dir),
            "--profiles-dir", str(profiles_dir_of(project_dir)),
            "--target", "local",
            "--target-path", str(self.last_target),
            "--vars", json.dumps(all_variables),
            "--quiet",
        ]  # fmt: skip


def rows_query(schema: str, tables: set[str]) -> str:
    """Every row of `tables` as (table_name, row_json)."""
    return " union all ".join(
        f"select '{table}' as table_name, to_json(struct(*)) as row_json from `{schema}`.`{table}`"
        for table in sorted(tables)
    )


BUILD_STAMPS = ("loaded_at", "parsed_at", "bound_at", "generation")
"""Columns that say when a build ran, which differ between any two builds of the same rows."""


def table_rows(rows: list[dict[str, str]]) -> dict[str, list[str]]:
    """The rows of `rows_query` by table, each as JSON without BUILD_STAMPS, sorted."""
    by_table: dict[str, list[str]] = {}
    for row in rows:
        values = {name: value for name, value in json.loads(row["row_json"]).items() if name not in BUILD_STAMPS}
        by_table.setdefault(row["table_name"], []).append(json.dumps(values, sort_keys=True))
    return {table: sorted(values) for table, values in by_table.items()}


@pytest.fixture(scope="session")
def session_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings the suite's session starts with: its own warehouse."""
    return Settings(
        project_dir=PACKAGE_PROJECT_DIR,
        landing_dir=tmp_path_factory.mktemp("landing"),
        warehouse_dir=tmp_path_factory.mktemp("warehouse"),
        master_url=None,
    )


@pytest.fixture(scope="session")
def spark(session_settings: Settings) -> Iterator[SparkSession]:
    """With Spark's Kafka source, as `cdc-dbt land` starts it, for the tests that land from a broker."""
    session = build_session(session_settings, SUITE_SESSION_JVM, kafka_source=True)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator["KafkaBroker"]:
    """One real Kafka broker (tests/real_parts) for every test that needs one, started on first use."""
    from tests.real_parts.kafka_broker import start_kafka

    with start_kafka(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker


@pytest.fixture(scope="session")
def dbt_project(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> DbtProject:
    return DbtProject(spark, tmp_path_factory.mktemp("dbt-target"))


DEMO_LANDING = PACKAGE_PROJECT_DIR / "demo" / "landing"


def copy_of_project(folder: Path) -> Path:
    """A copy of the project's dbt files in `folder` (a user's checkout), to change and build."""
    return copy_dbt_project(PACKAGE_PROJECT_DIR, folder)


CHECKS_FOLDER = Path("models") / "marts" / "checks"
CHECKS_DECLARATION = CHECKS_FOLDER / "_checks__models.yml"


def project_with_checks(folder: Path, models: dict[str, str], declaration: str) -> Path:
    """A copy of the project with small `models` (name: SQL) and their YAML `declaration` added
    under models/marts/checks (CHECKS_DECLARATION): what a test builds to see its checks pass or fail."""
    project = copy_of_project(folder)
    (project / CHECKS_FOLDER).mkdir()
    for name, sql in models.items():
        (project / CHECKS_FOLDER / f"{name}.sql").write_text(sql)
    (project / CHECKS_DECLARATION).write_text(declaration)
    return project


@pytest.fixture(scope="session")
def demo_build(dbt_project: DbtProject) -> Build:
    """The bundled demo, built once for every test that reads it, with dbt's unit tests too (they
    need one build, not every one), and the demo's typed marts: their data tests run here on the
    generator's streams, so the other builds of generated streams leave them out."""
    return dbt_project.build(DEMO_LANDING, schema="demo", example_marts=True, unit_tests=True)


COMBINED_BUILD_MODULES = (
    "tests.integration.test_corpus_arroyo_paimon_doris",
    "tests.integration.test_corpus_debezium_others",
    "tests.integration.test_corpus_flink",
    "tests.integration.test_corpus_mongodb",
    "tests.integration.test_connector_positions",
    "tests.integration.test_exact_decimals",
)
"""The modules whose landings share one build (combined_build): each lands its files with its
`landing_files()`, none on a topic or source identity (source_db, source_table) of another."""


@pytest.fixture(scope="session")
def combined_build(dbt_project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The landings of COMBINED_BUILD_MODULES (the corpora's real connector messages, events made
    for a property), each module's files in a folder of its own of one landing, built once with the
    demo's typed marts and data tests: a build of a few hundred records costs its fixed cost, so
    six builds cost nearly six times one. Each module reads the rows of its own topics or sources
    (tests/integration/corpus_tables.py)."""
    # A quote and a space in the landing path: it reaches SQL only as an escaped string literal.
    landing = tmp_path_factory.mktemp("combined") / "o'brien's landing"
    for module_name in COMBINED_BUILD_MODULES:
        module = importlib.import_module(module_name)
        try:
            files = module.landing_files()
        except pytest.skip.Exception:  # no ../shared/corpus: its modules skip, the others still build
            continue
        for file_name, records in files.items():
            write_kcat_file(landing / module_name.rsplit(".", 1)[-1] / file_name, records)
    return dbt_project.build(landing, schema="combined", example_marts=True)
