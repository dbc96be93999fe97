"""Replaying a hand-written OpenAI-client tool loop (``tests/fixtures/frameworks/plain``, no
framework, no tracereplay import, tools plain functions) traced only by an LLM-client
instrumentation: ``eval --agent agent:weather_agent`` answers its functions from the recording
(the no-framework fallback), live and with ``--llm recorded``, and a loop whose tools the
fallback cannot reach is an ERROR (airtight), never a tool run for real unnoticed.

The recordings hold no tool span: their tool calls come from the LLM messages.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    eval_doc,
    fake_model,  # noqa: F401 - a fixture
    record_suite,
    replay,
    replays_as_recorded,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its instrumentation's venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]
VENVS = {"openai_v2": "plain_openai_v2", "openlit": "plain_openlit"}


@pytest.mark.parametrize("instrumentation", ["openai_v2", "openlit"])
def test_plain_loop_replays_with_the_recorded_verdicts_live_and_offline(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    instrumentation: str,
) -> None:
    venv = VENVS[instrumentation]
    db, doc = replays_as_recorded(tmp_path, "plain", instrumentation, SHAPES, fake_model, venv=venv)
    expected = verdicts(doc)
    by_query = {c["query"]: c["repetitions"][0] for c in doc["cases"]}
    assert by_query[weather.QUESTIONS["multi_round"]]["replay"]["answered"] == 2
    assert by_query[weather.QUESTIONS["parallel"]]["replay"]["answered"] == 2
    # the recorded "Error: ..." reached the loop as an exception: it wrote the same text again
    assert by_query[weather.QUESTIONS["tool_error"]]["response"] == (
        "I could not find a city called Atlantis."
    )
    # offline: no model server at all; the LLM answered from the recording, nothing drifted
    offline, marks = replay(
        db, tmp_path, "plain", "weather_agent", "http://127.0.0.1:9/v1", "--llm", "recorded",
        venv=venv,
    )  # fmt: skip
    assert marks == []
    assert verdicts(offline) == expected, offline["_output"]
    for case in offline["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [], (case["query"], llm)
        assert llm["answered"] == llm["recorded"]
    assert_replay_runs_marked(db, offline)


def test_streaming_loop_replays_offline(tmp_path: Path) -> None:
    """The streamed loop (module-level functions called by name) answered from the recording,
    its streamed completions too."""
    db = tmp_path / "store.duckdb"
    record_suite(db, "plain", "openai_v2", ["streaming"])
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    doc, marks = replay(
        db, tmp_path, "plain", "weather_agent_streaming", "http://127.0.0.1:9/v1",
        "--llm", "recorded", venv="plain_openai_v2",
    )  # fmt: skip
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["streaming"]: "PASSED"}, doc["_output"]
    (case,) = doc["cases"]
    assert case["repetitions"][0]["replay"]["answered"] == 2


def test_tools_out_of_reach_run_live_and_make_the_case_an_error(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    """Tools called through another module: nothing answers them; the tool results the loop
    sends its model give them away (there are no tool spans to look at)."""
    db = tmp_path / "store.duckdb"
    record_suite(db, "plain", "openai_v2", ["multi_round", "parallel"])
    doc, marks = replay(
        db, tmp_path, "plain", "weather_agent_hidden", fake_model, venv="plain_openai_v2"
    )
    assert marks, "the hidden tools did not run"
    assert {c["status"] for c in doc["cases"]} == {"ERROR"}
    for case in doc["cases"]:
        assert case["reason"] == "tool get_weather ran live during replay (no --live-tools)"
