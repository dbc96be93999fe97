"""A fork with tools run for real, on the framework adapters: ``eval --agent agent:ATTR --llm
recorded --llm-until 1 --live-tools`` of each framework fixture's ``multi_round`` recording (LLM
call 1 asks ``get_weather(Paris)``, call 2 ``get_forecast(Paris, 2)``, call 3 answers), run from
the framework's venv with the scripted fake model serving.

One eval covers both modes of issue 28: the fork (call 1 and its tool call answered from the
recording, calls 2 and 3 sent to the model) and tools live against recorded decisions (the
tool call past the fork runs for real and its result is compared with the recorded one). What
every framework must give:

- the recorded part stays airtight: ``get_weather`` never runs (the harness tools' marks file
  holds only the call past the fork);
- the fork is where it was asked (``fork_round`` 1, one call answered, calls 2 and 3 live, no
  error), with the recorded verdict (PASSED: the run succeeded, the default checks hold);
- the live tool's result, unchanged data, is the recorded one (no tool-result drift: the
  adapter's live result and the recording's compare equal however the framework encodes it),
  and the live part asks what the recording holds (no prompt drift).

Each row starts the framework's agent process (seconds of imports): one eval per framework.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from framework_replay import FRAMEWORKS, fake_openai, record_suite, replay, verdicts
from framework_replay import weather as harness

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

#: (framework venv, recording's instrumentation, --agent attribute)
CASES = [
    ("pydantic_ai", "native", "weather_agent"),
    ("openai_agents", "openinference", "weather_agent"),
    ("langgraph", "openinference", "weather_agent"),
    ("strands", "native", "weather_agent"),
    ("google_adk", "adk_native", "weather_agent"),
    ("crewai", "openinference", "crew"),
    ("llama_index", "openinference", "weather_agent"),
    ("smolagents", "openinference", "weather_agent"),
    ("autogen", "openllmetry", "weather_agent"),
    ("agent_framework", "sensitive", "weather_agent"),
]

#: the one tool call past the fork, as the harness marks it when it really runs
LIVE_CALL = "get_forecast(Paris, 2)"


def _script(framework: str) -> dict:
    """The fake model's script as the framework's capture ran it: smolagents and LlamaIndex
    converse in their own way (``capture.script(weather)``); the others follow the harness's."""
    if framework not in ("smolagents", "llama_index"):
        return harness.SCRIPT
    spec = importlib.util.spec_from_file_location(
        f"{framework}_fork_capture", FRAMEWORKS / framework / "capture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.script(harness)


@pytest.mark.parametrize(("framework", "instrumentation", "attr"), CASES, ids=[c[0] for c in CASES])
def test_a_fork_with_live_tools_on_the_framework_adapter(
    tmp_path: Path, framework: str, instrumentation: str, attr: str
) -> None:
    db = tmp_path / "store.duckdb"
    assert record_suite(db, framework, instrumentation, ["multi_round"]).cases == 1
    # the live part continues the recorded conversation: its call ids must be new to it, as a
    # real model's are (the recording's came from a fake numbering from 1)
    server, url = fake_openai.start(_script(framework), first_id=9001)
    try:
        doc, marks = replay(
            db, tmp_path, framework, attr, url,
            "--llm", "recorded", "--llm-until", "1", "--live-tools",
        )  # fmt: skip
    finally:
        server.shutdown()
    output = doc["_output"]
    assert marks == [LIVE_CALL], (marks, output)  # nothing of the recorded part ran
    assert verdicts(doc) == {harness.QUESTIONS["multi_round"]: "PASSED"}, output  # as recorded
    [case] = doc["cases"]
    report = case["repetitions"][0]["replay"]
    llm = report["llm"]
    assert llm["errors"] == [], output
    assert llm["fork_round"] == 1 and llm["answered"] == 1, llm
    assert llm["live"] == [2, 3], llm
    assert llm["drift"] == [], llm["drift"]
    assert report["tools_live"] >= 1 and report["tool_results_compared"] >= 1, report
    assert report["tool_result_drift"] == [], report["tool_result_drift"]
    assert report["diverged_at"] is None
    assert "fork at LLM call 1: call 1 answered from the recording, 2 live from call 2" in (
        " ".join(output.split())
    )
