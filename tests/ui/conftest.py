"""Stores for the UI tests: the shared pipeline store (ingest -> promote -> 3 evals, see
tests/query/sql_pipeline.py), and a store holding only ingested runs (nothing promoted yet)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sql_pipeline import FIXTURES, pipeline_store, tracereplay  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from ui_helpers import client_for  # noqa: E402

_ingested: dict[str, Path] = {}


@pytest.fixture(scope="session")
def pipeline_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pipeline_store(tmp_path_factory)


def ingested_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The OTLP fixtures ingested, nothing else (built once per session)."""
    if "db" not in _ingested:
        db = tmp_path_factory.mktemp("ingested") / "runs.duckdb"
        tracereplay(db, "ingest", *sorted(str(p) for p in FIXTURES.glob("generated-*")))
        _ingested["db"] = db
    return _ingested["db"]


@pytest.fixture
def fresh_db(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A private copy of the ingested store, for a test that writes."""
    target = tmp_path / "ui.duckdb"
    shutil.copyfile(ingested_store(tmp_path_factory), target)
    return target


@pytest.fixture
def pipeline_copy(pipeline_db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "pipeline-copy.duckdb"
    shutil.copyfile(pipeline_db, target)
    return target


@pytest.fixture
def pipeline_client(pipeline_db: Path) -> Iterator[TestClient]:
    with client_for(pipeline_db) as client:
        yield client


@pytest.fixture
def page(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A Playwright page in the system Chromium, 1360 x 900 unless the test module sets
    ``VIEWPORT``; the browser is closed after the test."""
    from headless_chromium import started_browser

    viewport = getattr(request.module, "VIEWPORT", {"width": 1360, "height": 900})
    with started_browser() as browser:
        yield browser.new_context(viewport=viewport).new_page()
