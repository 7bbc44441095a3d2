"""Fixtures the unit and integration tests share. The real parts here start on first use, once per
session."""

from collections.abc import Iterator

import pytest

from tests.real_parts.schema_registry import SchemaRegistryServer, start_schema_registry


@pytest.fixture(scope="session")
def schema_registry_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SchemaRegistryServer]:
    """One real Schema Registry (Apicurio, tests/real_parts/schema_registry.py) for the tests that
    need one; a registry that cannot start fails them, it does not skip them."""
    with start_schema_registry(tmp_path_factory.mktemp("schema-registry")) as server:
        yield server
