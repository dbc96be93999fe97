"""A promoted turn of a conversation replays with its history (issue 54): the agent is given
the conversation before the question (a function's ``history`` parameter), and one that takes
none is replayed on its question alone, which the eval says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conversation import turn_run_ids, write_conversation

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).parent / "agents"


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    env.update(PYTHONPATH=str(AGENTS), COLUMNS="120")
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-turn Paris conversation, its last turn promoted into suite ``chat``."""
    tmp = tmp_path_factory.mktemp("history")
    db = tmp / "store.duckdb"
    assert _cli(db, "ingest", str(write_conversation(tmp / "conversation.json"))).returncode == 0
    third = turn_run_ids()[2]
    promoted = _cli(db, "promote", third, "--suite", "chat")
    assert promoted.returncode == 0, promoted.stderr
    return db


def _eval(db: Path, tmp: Path, agent: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / f"{agent.replace(':', '-')}.json"
    done = _cli(db, "eval", "chat", "--agent", agent, "--json", str(out))
    return done.returncode, json.loads(out.read_text()), done.stdout + done.stderr


def test_the_agent_is_given_the_conversation_before_the_question(db: Path, tmp_path: Path) -> None:
    code, doc, output = _eval(db, tmp_path, "chat_agents:remembers")
    assert code == 0, output
    [case] = doc["cases"]
    assert case["status"] == "PASSED", case["reason"]
    replay = case["repetitions"][0]["replay"]
    assert replay["history"] == "given" and replay["answered"] == 1  # get_weather: recorded
    assert case["repetitions"][0]["response"] == "Yes, take an umbrella."


def test_an_agent_that_takes_no_history_is_said_to(db: Path, tmp_path: Path) -> None:
    code, doc, output = _eval(db, tmp_path, "chat_agents:forgets")
    assert code == 1, output
    [case] = doc["cases"]
    assert case["status"] == "FAILED"
    assert case["repetitions"][0]["replay"]["history"] == "not taken"
    assert "history of 4 message(s) not given: the agent takes none" in " ".join(output.split())


def test_an_agent_command_is_said_to_get_the_question_alone(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "command.json"
    command = f"{sys.executable} -c \"print('Which city do you mean?')\""
    done = _cli(db, "eval", "chat", "--agent-cmd", command, "--json", str(out))
    [case] = json.loads(out.read_text())["cases"]
    assert case["repetitions"][0]["replay"]["history"] == "not taken"
    said = " ".join((done.stdout + done.stderr).split())
    assert "history of 4 message(s) not given: the agent takes none" in said
