"""A real PostgreSQL server for the tests: the system's ``initdb`` + ``pg_ctl`` (PostgreSQL 14+)
in a temporary directory, on a free 127.0.0.1 port, started once per test session.

Use the fixtures by importing them into a test module (``from postgres_server import
pg_server, pg_url``): ``pg_url`` is a fresh database per test (``CREATE DATABASE``), so tests
never see each other's rows. ``store_target`` is parametrized over both engines: a DuckDB file
path, or a PostgreSQL URL. As root (CI), the server runs as ``nobody``: PostgreSQL refuses root.
Without ``initdb`` on PATH the PostgreSQL cases are skipped, saying why.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_BIN_DIRS = ("/usr/local/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin")
_count = itertools.count()


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in _BIN_DIRS:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One running server: ``url(database)``, ``create_database()``, ``stop()``."""

    def __init__(self, root: Path) -> None:
        initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
        if not initdb or not pg_ctl:
            pytest.skip("no PostgreSQL here (initdb and pg_ctl not on PATH)")
        self.root, self.pg_ctl = root, pg_ctl
        self.data = root / "data"
        self.port = _free_port()
        self._as = {"user": "nobody", "group": "nogroup"} if os.geteuid() == 0 else {}
        if self._as:
            os.chown(root, 65534, 65534)
        self._run(
            [initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
             "--no-sync", "--no-instructions"]
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._run(
            [pg_ctl, "-D", str(self.data), "-l", str(root / "log"), "-o", options, "-w", "start"]
        )

    def _run(self, cmd: list[str]) -> None:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root, **self._as)
        if done.returncode:
            raise RuntimeError(f"{cmd[0]} failed: {done.stderr.strip()[-500:]}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = f"t{os.getpid()}_{next(_count)}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            [self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True, cwd=self.root, **self._as,
        )  # fmt: skip


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    root = Path(tempfile.mkdtemp(prefix="tracereplay-pg-"))
    server = PostgresServer(root)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new, empty database of the session's server; this machine's local files of the store
    (spool, locks) in the test's tmp dir."""
    monkeypatch.setenv("TRACEREPLAY_LOCAL_DIR", str(tmp_path / "local"))
    return pg_server.create_database()


@pytest.fixture(params=["duckdb", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store a test runs on, once per engine: a DuckDB file, or a PostgreSQL database."""
    if request.param == "duckdb":
        return str(tmp_path / "t.duckdb")
    return request.getfixturevalue("pg_url")
