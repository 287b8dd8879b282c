"""Real storage servers for the distributed Optuna tests, started on loopback by the tests:
a PostgreSQL cluster (one per session, a fresh database per test) and Optuna's gRPC proxy in
front of it (:mod:`uvp_plugins.bench.servers`, which ``uvp-bench stress`` uses too)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from uvp_plugins.bench.servers import GrpcProxyServer, PostgresServer

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server (initdb + pg_ctl as an unprivileged user, free loopback port),
    stopped and deleted at the end of the session."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """An SQLAlchemy URL of a new, empty database on the session's server."""
    return postgres_server.create_database(f"test_{next(_databases)}")


@pytest.fixture
def grpc_proxy(postgres_url: str) -> Iterator[GrpcProxyServer]:
    """Optuna's gRPC storage proxy (a child process) in front of a new database."""
    with GrpcProxyServer(postgres_url) as proxy:
        yield proxy
