"""Real parts for tests: private PostgreSQL and MariaDB servers, a one-node Kafka broker, and
Debezium's PostgreSQL and MySQL connectors producing into that broker, each started on 127.0.0.1
from a test's folder and stopped by its PID. tests/integration/test_real_*_pipeline.py use them
all; `scripts/live_demo.py` starts them for a person to watch.
"""
