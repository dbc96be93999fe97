"""Shared by the evaluate tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from postgres_server import pg_server, pg_url  # noqa: F401 (a PostgreSQL store's fixtures)


@pytest.fixture(autouse=True)
def agent_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test agents tally what they did (``shared_tally``): agents replay in agent
    processes of their own, so the test reads their tallies from files, one folder per test."""
    state = tmp_path / "agent-state"
    monkeypatch.setenv("REPLAY_AGENT_STATE", str(state))
    return state
