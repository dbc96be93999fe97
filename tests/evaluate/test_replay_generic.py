"""Replaying agents of frameworks no adapter knows, with their code unchanged: the generic
adapter runs the agent object through its entry point, the tool functions are answered wherever
the agent's code holds them. Each fixture is the capture's own agent module
(``tests/fixtures/frameworks/<fw>/agent.py``) run from its pinned venv."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from framework_replay import (
    FRAMEWORKS,
    _harness_module,
    fake_model,  # noqa: F401 - a fixture
    fake_openai,
    replay_tool_calls,
    replays_as_recorded,
    replays_offline,
    rows,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

DSPY_SHAPES = ["multi_round", "tool_error"]
WRAPPED_SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def _dspy_capture() -> Any:
    spec = importlib.util.spec_from_file_location(
        "dspy_capture", FRAMEWORKS / "dspy" / "capture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("attr", ["weather_agent", "answer"])
def test_dspy_react_replays_as_recorded(tmp_path: Path, attr: str) -> None:
    """A DSPy ``ReAct`` module (called with its one input, ``question=``) and a function
    wrapping it, against the fake model speaking ReAct's fields, then offline: every LLM call
    answered from the recording, no tool run for real, ``finish`` and the extract call as
    recorded."""
    server, url = fake_openai.start({})
    server.model = _dspy_capture().react_model(fake_openai, weather)
    (tmp_path / "live").mkdir()
    try:
        replays_as_recorded(tmp_path / "live", "dspy", "openinference", DSPY_SHAPES, url, attr=attr)
    finally:
        server.shutdown()
    (tmp_path / "offline").mkdir()
    replays_offline(tmp_path / "offline", "dspy", "openinference", DSPY_SHAPES, attr)


@pytest.mark.parametrize(
    ("framework", "instrumentation"),
    [("pydantic_ai", "native"), ("langgraph", "openinference"), ("openai_agents", "openinference")],
)
def test_a_function_wrapping_a_framework_agent_replays_as_recorded(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    framework: str,
    instrumentation: str,
) -> None:
    """``def answer(query): return agent.run_sync(query).output``: the adapters of the agents
    the function's code holds intercept their tools, as when ``--agent`` names the agent."""
    db, doc = replays_as_recorded(
        tmp_path, framework, instrumentation, WRAPPED_SHAPES, fake_model, attr="answer"
    )
    calls = replay_tool_calls(db, doc)
    assert calls[weather.QUESTIONS["multi_round"]] == [
        ("get_weather", None),
        ("get_forecast", None),
    ]


@pytest.mark.parametrize("attr", ["agent_logfire:weather_agent", "agent_logfire:answer"])
def test_pydantic_ai_instrumented_by_logfire_has_its_replays_captured(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    attr: str,
) -> None:
    """Logfire owns its tracer provider (and refuses to let tracereplay's be the global one):
    the replay's spans are read there, so the replay runs have their LLM and tool calls."""
    db, doc = replays_as_recorded(
        tmp_path, "pydantic_ai", "native", WRAPPED_SHAPES, fake_model, attr=attr
    )
    calls = replay_tool_calls(db, doc)
    assert calls[weather.QUESTIONS["multi_round"]] == [
        ("get_weather", None),
        ("get_forecast", None),
    ]
    for case in doc["cases"]:
        run_id = case["repetitions"][0]["run_id"]
        (run,) = rows(db, "SELECT total_llm_calls FROM runs WHERE run_id = ?", [run_id])
        assert run["total_llm_calls"] >= 2, case["query"]
    (tmp_path / "offline").mkdir()
    replays_offline(tmp_path / "offline", "pydantic_ai", "native", WRAPPED_SHAPES, attr)


def test_langgraph_under_openlit_replays_live_and_offline(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    """The LangGraph agent with OpenLIT set up at import (``langgraph_openlit/agent.py``):
    OpenLIT's provider is the one its spans go to; replayed live, offline (``--llm
    recorded``), and through a wrapping function."""
    shapes = ["multi_round", "tool_error", "parallel"]
    for attr in ("weather_agent", "answer"):
        (tmp_path / attr).mkdir()
        (tmp_path / f"{attr}-offline").mkdir()
        replays_as_recorded(
            tmp_path / attr, "langgraph_openlit", "openlit", shapes, fake_model, attr=attr
        )
        replays_offline(tmp_path / f"{attr}-offline", "langgraph_openlit", "openlit", shapes, attr)


@pytest.fixture
def fake_gemini(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The harness's fake Gemini server module (it imports the harness's fake_openai by its
    plain name)."""
    monkeypatch.setitem(sys.modules, "fake_openai", fake_openai)
    return _harness_module("fake_gemini")


def test_a_google_genai_loop_replays_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_gemini: Any
) -> None:
    """A hand-written loop on ``google-genai`` (recorded by the contrib instrumentation; its
    tool results recorded as the tool's own value, out of Gemini's ``{"result": ...}``):
    the recorded verdicts, the tools answered with the values the loop wraps again."""
    server, url = fake_gemini.start(weather.SCRIPT)
    monkeypatch.setenv("GEMINI_BASE_URL", url)
    monkeypatch.setenv("GEMINI_API_KEY", "test")
    shapes = ["multi_round", "tool_error", "parallel"]
    try:
        replays_as_recorded(tmp_path, "plain_google_genai", "contrib", shapes, url)
    finally:
        server.shutdown()
    monkeypatch.setenv("GEMINI_BASE_URL", "http://127.0.0.1:9")  # offline: nothing there
    (tmp_path / "offline").mkdir()
    replays_offline(tmp_path / "offline", "plain_google_genai", "contrib", shapes, "weather_agent")


def test_google_adk_under_openinference_replays_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_gemini: Any
) -> None:
    """ADK 2.x on Gemini recorded by OpenInference (one LLM span holding the loop's history),
    replayed from its venv: the agent and a function running it, against the fake Gemini
    server; the agent offline (``--llm recorded``: Gemini's wire answered from the recording)."""
    import copy

    script = copy.deepcopy(weather.SCRIPT)
    sub = weather.QUESTIONS["sub_agent"]
    script[sub][0] = {"tools": [["forecaster", {"request": weather.SUB_AGENT_QUESTION}]]}
    server, url = fake_gemini.start(script)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
    monkeypatch.setenv("GOOGLE_API_KEY", "test")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "false")
    shapes = ["multi_round", "tool_error", "parallel"]
    try:
        for attr in ("weather_agent", "answer"):
            (tmp_path / attr).mkdir()
            replays_as_recorded(
                tmp_path / attr, "google_adk_openinference", "openinference", shapes, url,
                attr=attr,
            )  # fmt: skip
    finally:
        server.shutdown()
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")  # offline: nothing there
    (tmp_path / "offline").mkdir()
    replays_offline(
        tmp_path / "offline", "google_adk_openinference", "openinference", shapes, "weather_agent"
    )


AGNO_SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


@pytest.mark.parametrize(
    ("attr", "shapes"),
    [
        ("weather_agent", AGNO_SHAPES),
        ("answer", AGNO_SHAPES),
        ("toolkit_agent", ["toolkit"]),
        ("delegating_agent", ["sub_agent"]),
    ],
)
def test_agno_agents_replay_as_recorded(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    attr: str,
    shapes: list[str],
) -> None:
    """An Agno ``Agent`` (run through ``run``), a function wrapping it, an agent whose tools
    are a ``Toolkit``'s methods, an agent whose tool runs another agent: live and offline, the
    tools answered inside Agno's own ``Function`` objects."""
    (tmp_path / "live").mkdir()
    db, doc = replays_as_recorded(
        tmp_path / "live", "agno", "openinference", shapes, fake_model, attr=attr
    )
    (tmp_path / "offline").mkdir()
    replays_offline(tmp_path / "offline", "agno", "openinference", shapes, attr)


@pytest.mark.parametrize(
    ("attr", "shapes"),
    [
        ("weather_agent", ["multi_round", "tool_error", "parallel", "provider_error"]),
        ("answer", ["multi_round", "tool_error"]),
        ("delegating_agent", ["sub_agent"]),
    ],
)
def test_ag2_agents_replay_as_recorded(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    attr: str,
    shapes: list[str],
) -> None:
    """An AG2 1.x ``Agent`` (its ``run`` handle entered and driven to its reply, the answer its
    ``body``), an async function asking it, an agent whose tool asks another agent: live and
    offline, traced by AG2's own TelemetryMiddleware."""
    (tmp_path / "live").mkdir()
    replays_as_recorded(tmp_path / "live", "ag2", "ag2_native", shapes, fake_model, attr=attr)
    (tmp_path / "offline").mkdir()
    replays_offline(tmp_path / "offline", "ag2", "ag2_native", shapes, attr)
