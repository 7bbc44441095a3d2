"""`cdc-dbt land`'s decisions that need no Kafka (cdc_dbt/land.py): which settings reach the Kafka
client and from where, which offsets a land reads after the last one, and what it says about
offsets retention deleted unread. tests/integration/test_land.py lands from a real broker."""

from pathlib import Path

import pytest

from cdc_dbt.land import (
    LandedPartition,
    LandError,
    PartitionRange,
    TopicSelection,
    kafka_client_settings,
    parse_properties,
    ranges_to_read,
    report_lines,
    topic_selection,
)

JAAS_FILE = """\
# a client of a SASL_SSL cluster
bootstrap.servers=broker1:9093,broker2:9093
security.protocol = SASL_SSL
sasl.mechanism: SCRAM-SHA-512
! a second kind of comment
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="lander" \\
    password="s3cret=";
ssl.truststore.location /etc/kafka/truststore.jks
"""


def test_a_properties_file_reads_as_java_reads_it() -> None:
    assert parse_properties(JAAS_FILE) == {
        "bootstrap.servers": "broker1:9093,broker2:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="lander"'
        ' password="s3cret=";',
        "ssl.truststore.location": "/etc/kafka/truststore.jks",
    }


def test_environment_variables_win_over_the_properties_file(tmp_path: Path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text(JAAS_FILE)
    settings = kafka_client_settings(
        {
            "CDC_KAFKA_PROPERTIES_FILE": str(properties),
            "CDC_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092",
            "CDC_KAFKA_SASL_MECHANISM": "PLAIN",
            "CDC_LANDING_DIR": "/not/a/kafka/setting",
        }
    )
    assert settings["bootstrap.servers"] == "127.0.0.1:9092"
    assert settings["sasl.mechanism"] == "PLAIN"
    assert settings["ssl.truststore.location"] == "/etc/kafka/truststore.jks"
    assert "landing.dir" not in settings and "properties.file" not in settings


def test_no_cluster_named_is_one_line_saying_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(LandError, match="set CDC_KAFKA_BOOTSTRAP_SERVERS"):
        kafka_client_settings({})
    with pytest.raises(LandError, match="no file"):
        kafka_client_settings({"CDC_KAFKA_PROPERTIES_FILE": str(tmp_path / "missing.properties")})


def test_topics_are_names_or_one_pattern() -> None:
    assert topic_selection(["a", "b", "a"]) == TopicSelection(names=("a", "b"))
    assert topic_selection(["--pattern", r"cdc\..*"]) == TopicSelection(pattern=r"cdc\..*")
    assert topic_selection([r"--pattern=cdc\..*"]) == TopicSelection(pattern=r"cdc\..*")
    for mistake in (["--pattern"], ["--pattern", "a", "b"], ["a", "--from-beginning"]):
        with pytest.raises(LandError):
            topic_selection(mistake)


def test_a_land_reads_from_the_offset_recorded_and_a_new_partition_from_its_first() -> None:
    held = {("t", 0): (0, 10), ("t", 1): (5, 8), ("u", 0): (0, 0), ("v", 0): (3, 3)}
    recorded = {("t", 0): 4, ("v", 0): 3}
    assert ranges_to_read(held, recorded) == [
        PartitionRange("t", 0, 4, 10, lost=0),
        PartitionRange("t", 1, 5, 8, lost=0),  # never landed: from the first offset held
    ]  # u is empty, v has nothing new


def test_offsets_retention_deleted_unread_are_counted_once() -> None:
    held = {("t", 0): (7, 12), ("t", 1): (9, 9)}
    first = ranges_to_read(held, {("t", 0): 2, ("t", 1): 4})
    assert first == [PartitionRange("t", 0, 7, 12, lost=5), PartitionRange("t", 1, 9, 9, lost=5)]
    # Once recorded (up to each range's end), the loss is not counted again.
    assert ranges_to_read(held, {(part.topic, part.partition): part.end for part in first}) == []


def test_the_report_says_what_landed_and_what_was_lost() -> None:
    ranges = [PartitionRange("t", 0, 7, 12, lost=5), PartitionRange("t", 1, 0, 3, lost=0)]
    landed = [LandedPartition("t", 0, 4), LandedPartition("t", 1, 3)]
    assert report_lines(["t", "quiet"], ranges, landed, Path("/landing/kafka/run")) == [
        "t: 7 records from 2 partition(s) into /landing/kafka/run",
        "quiet: nothing new",
        "t partition 0: 5 offsets (up to 6) were deleted by the topic's retention before they were landed:"
        " they are lost to this warehouse",
    ]
