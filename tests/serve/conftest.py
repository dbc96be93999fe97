"""Fixtures for the ``tracereplay serve`` tests: real server subprocesses on 127.0.0.1."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_server import pg_server, pg_url  # noqa: F401 (a PostgreSQL store's fixtures)
from serve_helpers import ServeProcess


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """``start_server(*args, db=None, env=None)``: a started server, stopped after the test."""
    started: list[ServeProcess] = []

    def start(
        *args: str, db: Path | None = None, env: dict[str, str] | None = None
    ) -> ServeProcess:
        server = ServeProcess(db or tmp_path / "serve.duckdb", *args, env=env).start()
        started.append(server)
        return server

    yield start
    for server in started:
        if server.alive():
            server.stop()


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1/localhost and its key (made with openssl)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
