"""Helpers the UI tests share (a module of its own: every test directory has a conftest)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from starlette.testclient import TestClient

from tracereplay.ui.app import create_app
from tracereplay.ui.config import UiConfig


def client_for(db: Path, **config: object) -> TestClient:
    """The real application, called in process; requests come from 127.0.0.1 with that Host."""
    app = create_app(UiConfig(db=db, **config))  # type: ignore[arg-type]
    return TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)


@contextmanager
def ui_server(db: Path) -> Iterator[str]:
    """``tracereplay ui --port 0`` on ``db`` in a process of its own, as a user starts it; yields
    the URL it prints (without the trailing slash) and stops it when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "ui", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("tracereplay ui: http://127.0.0.1:"), line + proc.stderr.read()
        yield line.split(": ", 1)[1].strip().rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
