"""Real parts for tests: private PostgreSQL and MariaDB servers, a one-node Kafka broker,
Debezium's PostgreSQL and MySQL connectors producing into that broker, and a Schema Registry
(Apicurio, for tests/unit/test_avro.py), each started on 127.0.0.1
from a test's folder and stopped by its PID. tests/integration/test_real_*_pipeline.py use them
all; `scripts/live_demo.py` starts them for a person to watch. What the servers share (started with
their output in a file, stopped if they never answer, stopped by PID) is in `server`, the process
primitives under it in `processes`.
"""
