"""A real one-node Apache Kafka broker for tests: broker and controller in one JVM (KRaft), on 127.0.0.1.

Kafka is not on PyPI or in Debian: its jars come from Maven Central (`org.apache.kafka:kafka_2.13`),
fetched once per machine by Maven into `$XDG_CACHE_HOME/cdc-dbt/kafka-<version>/` (`~/.cache/...`),
the way `cdc_dbt.spark_packages` keeps Delta Lake's. Every later start reuses that folder. A
broker then costs one short JVM that formats its storage and the broker's own JVM; both log to
files in the test's folder, never to the console.

Topics are created on first use with one partition (as Kafka Connect would find them); a test that
needs more partitions, or a topic whose first records retention already deleted, makes it itself
with `create_topic` and `delete_records_before`. Those and the other admin calls go through the
`confluent-kafka` client (librdkafka), the same client the Debezium runner produces with.

    with start_kafka(folder) as kafka:
        kafka.create_topic("cdc.public.orders", partitions=3)
        ... kafka.bootstrap_servers ...
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from tests.real_parts.processes import free_port, stop_process, wait_until
from tests.real_parts.server import Server, fail_if_exited, start_server, stopped_on_failure

KAFKA_VERSION = "4.4.0"
KAFKA_ARTIFACT = f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}"
"""The broker (Scala 2.13 build): its dependencies are the rest of the broker's jars."""
LOGGING_ARTIFACTS = ("org.apache.logging.log4j:log4j-slf4j-impl:2.25.5",)
"""Kafka logs through SLF4J 1.7 and ships log4j2 (2.25.5 in 4.4.0) without the binding between them;
its distribution adds this one. Without it the broker's log would be a warning that nothing logs."""
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.11.0"
"""Named with its version: Maven 3.8 would otherwise pick its own default, 2.8, from 2013."""
BROKER_MAIN = "kafka.Kafka"
STORAGE_TOOL_MAIN = "kafka.tools.StorageTool"
"""In `kafka_2.13` 4.4.0, as in 3.x (checked in the jar: there is no org.apache.kafka.tools.StorageTool)."""
JVM_OPTIONS = ("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
"""A test broker moves kilobytes: a small heap, one GC thread, and no C2 compiler, so that it starts
sooner and leaves the machine's two cores to the test (Kafka's own scripts ask for a 1 GiB heap, G1)."""
START_TIMEOUT_SECONDS = 90.0
CACHE_COMPLETE_MARKER = "complete"

SHORT_RETENTION_TOPIC_CONFIG = {
    "retention.ms": "1000",
    "segment.ms": "200",
    "file.delete.delay.ms": "0",
}
"""Topic settings under which Kafka deletes old records by itself: each segment closes 0.2 s after
it opened (at the next record written), and a closed segment whose records are over a second old is
deleted at the broker's next retention check (each second here, `log.retention.check.interval.ms`).
Timing-dependent: `delete_records_before` moves the log start offset at once, and is what a test of
'early offsets are gone' should use unless it tests retention itself."""
COMPACTED_TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "segment.ms": "200",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": "1000",
}
"""A compacted topic the log cleaner compacts within seconds, once a later record has closed the
segment (3 s here, measured), and whose tombstones it drops a second after that: what a Debezium topic
with `cleanup.policy=compact` becomes."""


@dataclass
class KafkaBroker(Server):
    """A running broker; `stop()` (or leaving the `with` block) ends its JVM by PID."""

    folder: Path
    port: int
    controller_port: int
    process: subprocess.Popen[bytes]
    log: Path
    _admin: AdminClient | None = field(default=None, repr=False)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM (the broker closes its logs cleanly), then SIGKILL if it hangs; waits for the exit.
        The admin client goes first: left connected, librdkafka would print each failed reconnect."""
        self._admin = None
        stop_process(self.process)

    def admin(self) -> AdminClient:
        """One admin client for this broker, made on first use."""
        if self._admin is None:
            self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        return self._admin

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
        """Create `name` with `partitions` partitions and topic `config` (e.g. SHORT_RETENTION_TOPIC_CONFIG),
        before anything writes to it: once written, the broker would have auto-created it with one."""
        topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})
        for future in self.admin().create_topics([topic], operation_timeout=30).values():
            future.result(timeout=60)

    def delete_records_before(self, topic: str, partition: int, offset: int) -> int:
        """Delete the partition's records below `offset` (Kafka's DeleteRecords, what retention does
        to a log's head): consumers then start at `offset`. Returns the new low watermark."""
        [future] = self.admin().delete_records([TopicPartition(topic, partition, offset)]).values()
        deleted = future.result(timeout=60)
        return int(deleted.low_watermark)

    def watermarks(self, topic: str, partition: int = 0) -> tuple[int, int]:
        """(first offset still held, next offset to be written) of one partition."""
        consumer = self._consumer()
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            return int(low), int(high)
        finally:
            consumer.close()

    def record_count(self, topics: list[str]) -> int:
        """How many records the topics hold now, all partitions (0 for a topic not yet created)."""
        metadata = self.admin().list_topics(timeout=10)
        consumer = self._consumer()
        try:
            total = 0
            for name in topics:
                described = metadata.topics.get(name)
                if described is None or described.error is not None:
                    continue
                for partition in described.partitions:
                    low, high = consumer.get_watermark_offsets(TopicPartition(name, partition), timeout=10)
                    total += high - low
            return total
        finally:
            consumer.close()

    def wait_for_records(self, topics: list[str], count: int, timeout: float = 60.0) -> None:
        """Wait until the topics hold at least `count` records in all."""
        wait_until(lambda: self.record_count(topics) >= count, timeout, f"{count} records in {topics}", self.log)

    def topics(self) -> list[str]:
        """The topics that exist, Kafka's internal ones (`__consumer_offsets`) left out."""
        return sorted(name for name in self.admin().list_topics(timeout=10).topics if not name.startswith("__"))

    def kcat_records(self, topic: str) -> list[dict[str, Any]]:
        """Every record the topic holds now, as `kcat -C -J -e` prints them: the landing's line format."""
        output = subprocess.run(
            ["kcat", "-C", "-J", "-e", "-q", "-b", self.bootstrap_servers, "-t", topic, "-o", "beginning"],
            check=True, capture_output=True, text=True, timeout=120,
        ).stdout  # fmt: skip
        return [json.loads(line) for line in output.splitlines() if line.strip()]

    def _consumer(self) -> Consumer:
        return Consumer({"bootstrap.servers": self.bootstrap_servers, "group.id": "cdc-dbt-tests-watermarks"})


def start_kafka(folder: Path, timeout: float = START_TIMEOUT_SECONDS) -> KafkaBroker:
    """Format storage in `folder` and start a broker there; returns once it answers metadata requests
    and lists itself as a live broker (it then accepts produce requests and creates topics)."""
    folder.mkdir(parents=True, exist_ok=True)
    jars = kafka_jars()
    port, controller_port = free_port(), free_port()
    properties = folder / "server.properties"
    properties.write_text(server_properties(folder / "data", port, controller_port))
    log = folder / "kafka.log"
    log4j = folder / "log4j2.properties"
    log4j.write_text(log4j2_properties(log))
    format_storage(jars, properties, log4j, folder / "format.log")
    process = start_server([*java_command(jars, log4j), BROKER_MAIN, str(properties)], folder, folder / "kafka.out")
    broker = KafkaBroker(folder, port, controller_port, process, log)
    with stopped_on_failure(broker):
        wait_until(lambda: broker_ready(broker), timeout, f"Kafka broker on port {port}", log)
    return broker


def broker_ready(broker: KafkaBroker) -> bool:
    """The broker answers a metadata request and is in it (so unfenced); fails if the JVM exited."""
    fail_if_exited(broker.process, "the Kafka broker", broker.folder / "kafka.out", broker.log)
    if not port_open(broker.port):  # before any client exists: librdkafka prints each refused connection
        return False
    try:
        metadata = broker.admin().list_topics(timeout=1)
    except KafkaException:
        return False
    return bool(metadata.brokers)


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def server_properties(data: Path, port: int, controller_port: int) -> str:
    """Node 1 as broker and controller, a static quorum of itself, everything replicated once."""
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data),
        "auto.create.topics.enable": "true",
        "num.partitions": "1",
        "default.replication.factor": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # Records are kept however old their timestamps (a test produces events from years ago,
        # which the default 7 days would delete at once); retention and compaction act within
        # seconds for the topics that ask for them.
        "log.retention.ms": "-1",
        "log.retention.check.interval.ms": "1000",
        "log.initial.task.delay.ms": "0",
        "log.cleaner.backoff.ms": "1000",
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        # Few threads: the test machine has two cores and this broker a handful of clients.
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
    }
    return "".join(f"{name}={value}\n" for name, value in settings.items())


def log4j2_properties(log: Path) -> str:
    """Everything the broker logs, INFO and up, into `log`."""
    return f"""\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""


def format_storage(jars: list[Path], properties: Path, log4j: Path, log: Path) -> None:
    """Write the cluster id and the node's metadata into the empty data folder (KRaft's first step)."""
    with log.open("wb") as out:
        subprocess.run(
            [*java_command(jars, log4j), STORAGE_TOOL_MAIN, "format", "-t", new_cluster_id(), "-c", str(properties)],
            check=True, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip


def new_cluster_id() -> str:
    """A random Kafka Uuid as `kafka-storage random-uuid` prints it (URL-safe base64, no padding),
    made here to save that tool's JVM start."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def java_command(jars: list[Path], log4j: Path) -> list[str]:
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else "java"
    classpath = ":".join(str(jar) for jar in jars)
    return [str(java), *JVM_OPTIONS, f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath]


def kafka_jars() -> list[Path]:
    """The broker's jars, fetched from Maven Central on first use on this machine, then cached."""
    return maven_jars(f"kafka-{KAFKA_VERSION}", [KAFKA_ARTIFACT, *LOGGING_ARTIFACTS])


def maven_jars(name: str, artifacts: list[str], transitive: bool = True) -> list[Path]:
    """The jars of `artifacts` (`group:artifact:version`), with their runtime dependencies unless not
    `transitive`: fetched by Maven on first use on this machine into the cache folder `name`, then reused."""
    folder = cache_folder(name)
    if not (folder / CACHE_COMPLETE_MARKER).is_file():
        fetch_jars(folder, artifacts, transitive)
    return sorted((folder / "jars").glob("*.jar"))


def cache_folder(name: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "cdc-dbt" / name


def fetch_jars(folder: Path, artifacts: list[str], transitive: bool = True) -> None:
    """Let Maven copy the artifacts (and their runtime dependencies) into a new folder beside `folder`,
    then rename it into place: a cache folder is whole or absent, even if two test runs fetch at once."""
    if shutil.which("mvn") is None:
        raise RuntimeError(f"fetching {', '.join(artifacts)} needs Maven (apt-get install maven)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        (staging / "pom.xml").write_text(fetching_pom(artifacts))
        started = time.monotonic()
        fetched = subprocess.run(
            ["mvn", "-q", "-B", f"{DEPENDENCY_PLUGIN}:copy-dependencies", "-DincludeScope=runtime",
             f"-DexcludeTransitive={str(not transitive).lower()}", f"-DoutputDirectory={staging / 'jars'}"],
            cwd=staging, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if fetched.returncode != 0:
            output = (fetched.stdout + fetched.stderr).strip().splitlines()[-10:]
            raise RuntimeError(f"Maven could not fetch {', '.join(artifacts)}: " + "\n".join(output))
        (staging / CACHE_COMPLETE_MARKER).write_text(f"fetched in {time.monotonic() - started:.0f} s\n")
        (staging / "pom.xml").unlink()
        if folder.exists() and not (folder / CACHE_COMPLETE_MARKER).is_file():
            shutil.rmtree(folder)  # an earlier copy that did not finish
        try:
            staging.rename(folder)
        except OSError:
            if not (folder / CACHE_COMPLETE_MARKER).is_file():  # not another run's complete copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def fetching_pom(artifacts: list[str]) -> str:
    """A POM that only depends on `artifacts` (`group:artifact:version`), for Maven to resolve."""
    dependencies = "".join(
        f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>"
        for group, artifact, version in (coordinates.split(":") for coordinates in artifacts)
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.cdc-dbt.tests</groupId><artifactId>cached-jars</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>{dependencies}</dependencies>
</project>
"""
