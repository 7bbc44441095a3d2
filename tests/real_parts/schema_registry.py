"""A real Schema Registry for tests: Apicurio Registry on 127.0.0.1, serving the Confluent API.

Apicurio Registry (Apache-2.0) answers Confluent's Schema Registry API under `/apis/ccompat/v7`,
the API Confluent's AvroConverter and serializers use, and keeps its schemas in memory (an
in-memory H2 database, its default: no Kafka, nothing on disk). Its ids there are content ids.

Version 3.0.9: of the 3.x releases Maven Central serves as a whole application
(`io.apicurio:apicurio-registry-app:<version>:tar.gz:all`), the newest that runs on Java 17 (3.2
and later need Java 21; no 3.1 or 3.2 application is served there). Maven itself cannot fetch
it: the application's POM names a parent POM Central does not serve, and Maven refuses an artifact
whose descriptor it cannot read. So the archive is downloaded from the repository Maven names
as its own (`project.repositories`, asked once), checked against the `.sha1` beside it, and
unpacked once per machine into `$XDG_CACHE_HOME/cdc-dbt/apicurio-registry-<version>/`, as
`tests/real_parts/kafka_broker.py` keeps Kafka's jars. A start then costs one JVM: about 4 s.

    with start_schema_registry(folder) as registry:
        ... registry.url ...   # http://127.0.0.1:<port>/apis/ccompat/v7
"""

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.real_parts.kafka_broker import CACHE_COMPLETE_MARKER, cache_folder
from tests.real_parts.processes import free_port, stop_process, wait_until
from tests.real_parts.server import Server, fail_if_exited, start_server, stopped_on_failure

APICURIO_VERSION = "3.0.9"
ARTIFACT_PATH = (
    f"io/apicurio/apicurio-registry-app/{APICURIO_VERSION}/apicurio-registry-app-{APICURIO_VERSION}-all.tar.gz"
)
"""The application's archive, under a Maven repository's root."""
RUNNER_JAR = f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"
"""3.0.9 is packaged as a Quarkus legacy jar: the runner jar with its `lib/` beside it."""
CONFLUENT_API = "/apis/ccompat/v7"
HELP_PLUGIN = "org.apache.maven.plugins:maven-help-plugin:3.5.1"
JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
"""A test registry holds a few schemas: a small heap, one GC thread, no C2 (as the test broker)."""
START_TIMEOUT_SECONDS = 90.0


@dataclass
class SchemaRegistryServer(Server):
    """A running Apicurio Registry; `stop()` (or leaving the `with` block) ends its JVM by PID."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        """The Confluent-compatible API's base URL, what `CDC_SCHEMA_REGISTRY_URL` names."""
        return f"http://127.0.0.1:{self.port}{CONFLUENT_API}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_process(self.process)


def start_schema_registry(folder: Path, timeout: float = START_TIMEOUT_SECONDS) -> SchemaRegistryServer:
    """Start Apicurio Registry on a free loopback port; returns once its Confluent API answers."""
    folder.mkdir(parents=True, exist_ok=True)
    runner = apicurio_app() / RUNNER_JAR
    port = free_port()
    log = folder / "apicurio.log"
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else "java"
    command = [
        str(java), *JVM_OPTIONS, "-Dquarkus.http.host=127.0.0.1", f"-Dquarkus.http.port={port}",
        f"-Dquarkus.log.file.path={log}", "-Dquarkus.log.file.enable=true", "-Dquarkus.log.console.enable=false",
        "-jar", str(runner),
    ]  # fmt: skip
    process = start_server(command, folder, folder / "apicurio.out")
    server = SchemaRegistryServer(folder, port, process, log)
    with stopped_on_failure(server):
        wait_until(lambda: registry_ready(server), timeout, f"Apicurio Registry on port {port}", log)
    return server


def registry_ready(server: SchemaRegistryServer) -> bool:
    """Its Confluent API lists subjects; fails at once if the JVM exited."""
    fail_if_exited(server.process, "Apicurio Registry", server.folder / "apicurio.out")
    try:
        with urllib.request.urlopen(f"{server.url}/subjects", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def apicurio_app() -> Path:
    """The unpacked application, downloaded on first use on this machine, then cached."""
    folder = cache_folder(f"apicurio-registry-{APICURIO_VERSION}")
    if not (folder / CACHE_COMPLETE_MARKER).is_file():
        fetch_app(folder)
    return folder


def fetch_app(folder: Path) -> None:
    """Download, check and unpack the archive into a new folder beside `folder`, then rename it into
    place: a cache folder is whole or absent, even if two test runs fetch at once."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        started = time.monotonic()
        url = f"{maven_repository()}/{ARTIFACT_PATH}"
        archive = staging / "app.tar.gz"
        with urllib.request.urlopen(url, timeout=60) as answer, archive.open("wb") as file:
            shutil.copyfileobj(answer, file)
        with urllib.request.urlopen(f"{url}.sha1", timeout=60) as answer:
            expected = answer.read().decode().split()[0]
        actual = hashlib.sha1(archive.read_bytes()).hexdigest()
        if actual != expected:
            raise RuntimeError(f"{url}: SHA-1 {actual}, but the repository says {expected}")
        with tarfile.open(archive) as tar:
            tar.extractall(staging, filter="data")
        archive.unlink()
        (staging / CACHE_COMPLETE_MARKER).write_text(f"fetched in {time.monotonic() - started:.0f} s\n")
        if folder.exists() and not (folder / CACHE_COMPLETE_MARKER).is_file():
            shutil.rmtree(folder)  # an earlier copy that did not finish
        try:
            staging.rename(folder)
        except OSError:
            if not (folder / CACHE_COMPLETE_MARKER).is_file():  # not another run's complete copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def maven_repository() -> str:
    """The URL of the repository Maven fetches from by default (`CDC_TEST_MAVEN_REPOSITORY` wins)."""
    named = os.environ.get("CDC_TEST_MAVEN_REPOSITORY")
    if named:
        return named.rstrip("/")
    if shutil.which("mvn") is None:
        raise RuntimeError(f"fetching Apicurio Registry {APICURIO_VERSION} needs Maven (apt-get install maven)")
    with tempfile.TemporaryDirectory() as empty:  # no pom.xml: Maven's own default repositories
        asked = subprocess.run(
            ["mvn", "-q", "-B", f"{HELP_PLUGIN}:evaluate",
             "-Dexpression=project.repositories[0].url", "-DforceStdout"],
            cwd=empty, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    # Maven 3.8 colours its output even in batch mode: the URL is found among the escapes.
    url = re.search(r"https?://[^\s\x1b]+", asked.stdout) if asked.returncode == 0 else None
    if url is None:
        raise RuntimeError(f"Maven did not name its repository: {(asked.stdout + asked.stderr).strip()[-500:]}")
    return url.group().rstrip("/")
