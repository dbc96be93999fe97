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
    fake_model,  # noqa: F401 - a fixture
    record_suite,
    recorded_copy,
    replay,
    replays_as_recorded,
    rows,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its instrumentation's venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]
NOWHERE = "http://127.0.0.1:9/v1"  # no model listens: --llm recorded answers every call


def assert_offline(doc: dict, expected: dict[str, str]) -> None:
    """The recorded verdicts, every LLM call answered from the recording, nothing drifted."""
    assert verdicts(doc) == expected, doc["_output"]
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [], (case["query"], llm)
        assert llm["answered"] == llm["recorded"]


def test_openai_v2_loop_replays_with_the_recorded_verdicts_live_and_offline(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    db, doc = replays_as_recorded(
        tmp_path, "plain", "openai_v2", SHAPES, fake_model, venv="plain_openai_v2"
    )
    expected = verdicts(doc)
    by_query = {c["query"]: c["repetitions"][0] for c in doc["cases"]}
    assert by_query[weather.QUESTIONS["multi_round"]]["replay"]["answered"] == 2
    assert by_query[weather.QUESTIONS["parallel"]]["replay"]["answered"] == 2
    # the recorded "Error: ..." reached the loop as an exception: it wrote the same text again
    assert by_query[weather.QUESTIONS["tool_error"]]["response"] == (
        "I could not find a city called Atlantis."
    )
    offline, marks = replay(
        db, tmp_path, "plain", "weather_agent", NOWHERE, "--llm", "recorded", venv="plain_openai_v2"
    )
    assert marks == []
    assert_offline(offline, expected)
    assert_replay_runs_marked(db, offline)
    # the replayed provider failure reads as the recorded one (the client's prefix once)
    failed = {c["query"]: c for c in offline["cases"]}[weather.QUESTIONS["provider_error"]]
    (run,) = rows(
        db, "SELECT error FROM runs WHERE run_id = ?", [failed["repetitions"][0]["run_id"]]
    )
    assert run["error"] == "InternalServerError: Error code: 500 - scripted provider failure"


def test_openlit_loop_replays_offline_with_the_recorded_verdicts(tmp_path: Path) -> None:
    """OpenLIT's recording (no assistant tool-call messages in the history, a default
    temperature written though never sent, no input on the failed request) answers the same
    loop offline, its tools from the recording (the live path is openai-v2's test)."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "plain", "openlit", SHAPES)
    assert expected[weather.QUESTIONS["provider_error"]] == "FAILED"
    doc, marks = replay(
        db, tmp_path, "plain", "weather_agent", NOWHERE, "--llm", "recorded", venv="plain_openlit"
    )
    assert marks == [], "a tool ran for real during replay"
    assert_offline(doc, expected)
    assert_replay_runs_marked(db, doc)


def test_streaming_loop_replays_offline(tmp_path: Path) -> None:
    """The streamed loop (module-level functions called by name) answered from the recording,
    its streamed completions too."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "plain", "openai_v2", ["streaming"])
    doc, marks = replay(
        db, tmp_path, "plain", "weather_agent_streaming", NOWHERE, "--llm", "recorded",
        venv="plain_openai_v2",
    )  # fmt: skip
    assert marks == []
    assert expected == {weather.QUESTIONS["streaming"]: "PASSED"}
    assert_offline(doc, expected)
    (case,) = doc["cases"]
    assert case["repetitions"][0]["replay"]["answered"] == 2


@pytest.mark.parametrize("attr", ["weather_agent_hidden", "weather_agent_plugin"])
def test_tools_reached_through_another_module_or_a_plugin_are_answered(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    attr: str,
) -> None:
    """Tools the loop calls as ``weather.get_weather``, or as methods of a plugin object:
    answered where they are defined (the harness function, the plugin's method: the outer
    call is the recorded one)."""
    db = tmp_path / "store.duckdb"
    record_suite(db, "plain", "openai_v2", ["multi_round"])
    doc, marks = replay(db, tmp_path, "plain", attr, fake_model, venv="plain_openai_v2")
    assert marks == []
    (case,) = doc["cases"]
    assert case["status"] == "PASSED", doc["_output"]
    assert case["repetitions"][0]["replay"]["answered"] == 2


@pytest.mark.parametrize("attr", ["weather_agent_subprocess", "weather_agent_object_subprocess"])
def test_tools_out_of_reach_run_live_and_make_the_case_an_error(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    attr: str,
) -> None:
    """Tools run in a process of their own: nothing answers them; the tool results the loop
    sends its model give them away (there are no tool spans to look at)."""
    db = tmp_path / "store.duckdb"
    record_suite(db, "plain", "openai_v2", ["multi_round"])
    # (the same loop as an agent object: the generic adapter's reach ends the same way)
    doc, marks = replay(db, tmp_path, "plain", attr, fake_model, venv="plain_openai_v2")
    assert marks == ["get_weather(Paris)", "get_forecast(Paris, 2)"]
    (case,) = doc["cases"]
    assert case["status"] == "ERROR"
    assert case["reason"] == "tool get_weather ran live during replay (no --live-tools)"
