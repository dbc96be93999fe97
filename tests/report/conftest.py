from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "query"))  # the shared pipeline store

from sql_pipeline import pipeline_store  # noqa: E402


@pytest.fixture(scope="session")
def pipeline_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store filled by ingest -> promote -> eval (see tests/query/sql_pipeline.py)."""
    return pipeline_store(tmp_path_factory)
