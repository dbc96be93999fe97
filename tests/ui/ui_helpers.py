"""Helpers the UI tests share (a module of its own: every test directory has a conftest)."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from tracereplay.ui.app import create_app
from tracereplay.ui.config import UiConfig


def client_for(db: Path, **config: object) -> TestClient:
    """The real application, called in process; requests come from 127.0.0.1 with that Host."""
    app = create_app(UiConfig(db=db, **config))  # type: ignore[arg-type]
    return TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)
