"""Real parts for tests: a private PostgreSQL, a one-node Kafka broker, and Debezium's PostgreSQL
connector producing into that broker, each started on 127.0.0.1 from a test's folder and stopped
by its PID. `python -m tests.real_parts.smoke` runs all three once.
"""
