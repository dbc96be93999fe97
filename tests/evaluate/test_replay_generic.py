"""Replaying agents of frameworks no adapter knows, with their code unchanged: the generic
adapter runs the agent object through its entry point, the tool functions are answered wherever
the agent's code holds them. Each fixture is the capture's own agent module
(``tests/fixtures/frameworks/<fw>/agent.py``) run from its pinned venv."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import NOWHERE, recorded_copy, replay, replays_offline, verdicts

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

DSPY_SHAPES = ["multi_round", "tool_error"]


@pytest.mark.parametrize("attr", ["weather_agent", "answer"])
def test_dspy_react_replays_offline_as_recorded(tmp_path: Path, attr: str) -> None:
    """A DSPy ``ReAct`` module (called with its one input, ``question=``) and a function
    wrapping it: every LLM call answered from the recording, no tool run for real."""
    replays_offline(tmp_path, "dspy", "openinference", DSPY_SHAPES, attr)
