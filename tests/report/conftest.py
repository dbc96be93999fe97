from __future__ import annotations

from pathlib import Path

import pytest
from sql_pipeline import pipeline_store  # noqa: E402


@pytest.fixture(scope="session")
def pipeline_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store filled by ingest -> promote -> eval (see tests/query/sql_pipeline.py)."""
    return pipeline_store(tmp_path_factory)
