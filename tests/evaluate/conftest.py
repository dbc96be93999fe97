"""Shared by the evaluate tests."""

from __future__ import annotations

import os
from pathlib import Path

import framework_replay
import pytest
import replay_fixtures
from eval_check_helpers import FakeChat
from postgres_server import pg_server, pg_url  # noqa: F401 (a PostgreSQL store's fixtures)


@pytest.fixture(scope="session", autouse=True)
def recorded_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder ``framework_replay.recorded_copy`` keeps its stores in: one per test run,
    shared by the xdist workers (their base folders are side by side), so each framework
    recording is made once whichever worker needs it first."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    framework_replay.STORES = root / "recorded-stores"
    return framework_replay.STORES


@pytest.fixture(autouse=True)
def agent_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test agents tally what they did (``shared_tally``): agents replay in agent
    processes of their own, so the test reads their tallies from files, one folder per test."""
    state = tmp_path / "agent-state"
    monkeypatch.setenv("REPLAY_AGENT_STATE", str(state))
    return state


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with the weather suite of three cities (``make_suite``), the test agents' folder
    as the working directory (``--agent`` modules are imported from there), the agents' call
    tally cleared. A test file needing another suite defines its own ``db``."""
    monkeypatch.chdir(replay_fixtures.AGENTS)
    path = tmp_path / "store.duckdb"
    replay_fixtures.make_suite(path, replay_fixtures.CITIES[:3])
    replay_fixtures.replay_agents.CALLS.clear()
    return path


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch):
    """An llmJudge endpoint on 127.0.0.1 (``FakeChat``), the OpenAI environment cleared."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(var, raising=False)
    server = FakeChat()
    yield server
    server.close()
