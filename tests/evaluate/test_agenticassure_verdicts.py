"""An AgenticAssure suite imported by ``tracereplay suite import`` and evaluated with the user's
own AgenticAssure adapter gives the verdicts AgenticAssure 0.4.0 itself gives: both run on the
same file and adapter here, compared scenario by scenario and scorer by scorer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

aa = pytest.importorskip("agenticassure", reason="the agenticassure test extra")
from agenticassure.loader import load_scenarios  # noqa: E402
from agenticassure.results import RunResult  # noqa: E402
from agenticassure.runner import Runner  # noqa: E402

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent

ADAPTER = '''
from agenticassure import AgentResult, ToolCall, TokenUsage

REPLIES = {
    "weather london": ("It is 15 degrees in London.", [("get_weather", {"location": "London"})]),
    "weather wrong arg": ("It is 15 degrees.", [("get_weather", {"location": "Paris"})]),
    "no tool": ("I did not look it up.", []),
    "missing key": ("12 degrees", [("get_weather", {"city": "London"})]),
    "extra tools": ("Done: 3 degrees", [("search", {}), ("get_weather", {"location": "Oslo", "unit": "c"})]),
    "first call counts": ("ok", [("get_weather", {"location": "Rome"}), ("get_weather", {"location": "Oslo"})]),
    "case insensitive": ("The WEATHER is fine", []),
    "not found": ("Something else entirely", []),
    "blank": ("   ", []),
    "exact default": ("  Hello World ", []),
    "exact raw mismatch": ("Hello World", []),
    "exact raw equal": ("Hello World", []),
    "exact nothing expected": ("anything", []),
    "sharp s": ("straße", []),
    "regex none": ("42 degrees", []),
    "regex invalid": ("42 degrees", []),
    "regex groups": ("Order #1234 shipped", []),
    "no scorers": ("fine", []),
    "args only": ("fine", []),
    "empty tools": ("fine", []),
    "two scorers one fails": ("The answer is 7", []),
    "numbers": ("ok", [("calc", {"x": 1, "y": [1, 2], "z": {"a": True}})]),
    "tool result": ("done", [("lookup", {"q": "x"})]),
    "similar": ("The weather in London is cloudy and mild today.", []),
    "dissimilar": ("Bananas are rich in potassium.", []),
    "similar no expected": ("anything", []),
}

FLAKY: dict[str, int] = {}


class SupportAgent:
    """An AgenticAssure adapter, as a user has it (unchanged for tracereplay)."""

    def run(self, input, context=None):
        if input == "boom":
            raise RuntimeError("the agent broke")
        if input == "flaky":
            FLAKY[input] = FLAKY.get(input, 0) + 1
            if FLAKY[input] == 1:
                raise RuntimeError("first attempt fails")
            return AgentResult(output="recovered")
        output, calls = REPLIES[input]
        return AgentResult(
            output=output,
            tool_calls=[ToolCall(name=n, arguments=a, result={"ok": True}) for n, a in calls],
            latency_ms=5.0,
            token_usage=TokenUsage(prompt_tokens=3, completion_tokens=4),
        )
'''

SUITE = r"""
suite:
  name: aa-parity
  description: every scorer rule of AgenticAssure 0.4.0
  config:
    default_timeout: 30
    retries: 0
    default_scorers: [passfail]
scenarios:
  - {name: all good, input: weather london, expected_output: degrees, expected_tools: [get_weather],
     expected_tool_args: {get_weather: {location: London}}, metadata: {regex_pattern: '\d+ degrees'},
     scorers: [passfail, regex]}
  - {name: wrong arg, input: weather wrong arg, expected_tools: [get_weather],
     expected_tool_args: {get_weather: {location: London}}}
  - {name: tool missing, input: no tool, expected_tools: [get_weather]}
  - {name: arg key missing, input: missing key, expected_tool_args: {get_weather: {location: London}}}
  - {name: extra calls and args are fine, input: extra tools, expected_tools: [get_weather],
     expected_tool_args: {get_weather: {location: Oslo}}}
  - {name: the first call is compared, input: first call counts,
     expected_tool_args: {get_weather: {location: Oslo}}}
  - {name: expected output any case, input: case insensitive, expected_output: weather is FINE}
  - {name: expected output absent, input: not found, expected_output: weather}
  - {name: blank output, input: blank}
  - {name: exact normalized, input: exact default, expected_output: hello world, scorers: [exact]}
  - {name: exact raw differs, input: exact raw mismatch, expected_output: hello world,
     metadata: {exact_normalize: false}, scorers: [exact]}
  - {name: exact raw equal, input: exact raw equal, expected_output: Hello World,
     metadata: {exact_normalize: false}, scorers: [exact]}
  - {name: exact without expected, input: exact nothing expected, scorers: [exact]}
  - {name: lower is not casefold, input: sharp s, expected_output: STRASSE, scorers: [exact]}
  - {name: regex without pattern, input: regex none, scorers: [regex]}
  - {name: regex invalid, input: regex invalid, metadata: {regex_pattern: '(unclosed'}, scorers: [regex]}
  - {name: regex groups, input: regex groups, metadata: {regex_pattern: '#(?P<id>\d+)'}, scorers: [regex, passfail]}
  - {name: no scorers, input: no scorers, scorers: []}
  - {name: args for a tool not listed, input: args only, expected_tools: [],
     expected_tool_args: {lookup: {q: x}}}
  - {name: empty expected tools, input: empty tools, expected_tools: []}
  - {name: one of two scorers fails, input: two scorers one fails, expected_output: answer is 7,
     metadata: {regex_pattern: '^\d'}, scorers: [passfail, regex]}
  - {name: numbers compare by value, input: numbers, expected_tools: [calc],
     expected_tool_args: {calc: {x: 1.0, y: [1, 2], z: {a: true}}}}
  - {name: tags kept, input: tool result, expected_tools: [lookup], tags: [smoke, tools]}
  - {name: agent raises, input: boom}
"""

SIMILARITY = """
suite: {name: aa-similarity}
scenarios:
  - {name: close, input: similar, expected_output: It is cloudy and mild in London today.,
     metadata: {similarity_threshold: 0.5}, scorers: [similarity]}
  - {name: default threshold, input: similar, expected_output: London weather is cloudy and mild.,
     scorers: [similarity]}
  - {name: far, input: dissimilar, expected_output: It is cloudy and mild in London today.,
     metadata: {similarity_threshold: 0.9}, scorers: [similarity, passfail]}
  - {name: nothing expected, input: similar no expected, scorers: [similarity]}
"""

RUN_CONTROL = """
suite:
  name: aa-run-control
  config: {retries: 1, fail_fast: true}
scenarios:
  - {name: recovers on retry, input: flaky, expected_output: recovered}
  - {name: passes, input: weather london, expected_output: degrees}
  - {name: fails, input: not found, expected_output: weather}
  - {name: never run, input: weather london}
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "aa_support_agent.py").write_text(textwrap.dedent(ADAPTER), encoding="utf-8")
    return tmp_path


def _tracereplay(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(work), "COLUMNS": "120"}
    env.pop("TRACEREPLAY_DB", None)
    return subprocess.run(
        [str(BIN / "tracereplay"), "--db", str(work / "t.duckdb"), *args],
        cwd=work, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def _agenticassure(work: Path, suite_file: Path) -> RunResult:
    """AgenticAssure 0.4.0 itself: its loader, its runner, the same adapter module."""
    sys.path.insert(0, str(work))
    try:
        sys.modules.pop("aa_support_agent", None)
        import aa_support_agent  # type: ignore[import-not-found]

        suite = load_scenarios(suite_file)
        runner = Runner(aa_support_agent.SupportAgent())
        return runner.run_suite(suite)
    finally:
        sys.path.remove(str(work))
        sys.modules.pop("aa_support_agent", None)


def _ours(work: Path, suite_file: Path, name: str, *eval_args: str) -> RunResult:
    done = _tracereplay(work, "suite", "import", str(suite_file))
    assert done.returncode == 0, done.stderr
    out = work / f"{name}.json"
    done = _tracereplay(
        work, "eval", name, "--agent", "aa_support_agent:SupportAgent",
        "--format", "agenticassure-json", "--output", str(out), *eval_args,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return RunResult.model_validate(json.loads(out.read_text(encoding="utf-8")))


def _compare(theirs: RunResult, ours: RunResult) -> list[tuple[str, Any, Any]]:
    """Scenario by scenario: (name, AgenticAssure's verdicts, ours) where they differ."""
    mine = {r.scenario.name: r for r in ours.scenario_results}
    differ = []
    for t in theirs.scenario_results:
        o = mine.get(t.scenario.name)
        want = (t.passed, [(s.scorer_name, s.passed) for s in t.scores])
        got = None if o is None else (o.passed, [(s.scorer_name, s.passed) for s in o.scores])
        if o is None or want[0] != got[0] or (t.scores and want[1] != got[1]):
            differ.append((t.scenario.name, want, got))
    return differ


def test_every_scenario_gets_agenticassures_verdict(work: Path) -> None:
    suite_file = work / "parity.yaml"
    suite_file.write_text(SUITE, encoding="utf-8")
    theirs = _agenticassure(work, suite_file)
    ours = _ours(work, suite_file, "aa-parity", "--concurrency", "1")
    assert len(theirs.scenario_results) == len(ours.scenario_results) == 24
    assert _compare(theirs, ours) == []
    assert ours.pass_rate == pytest.approx(theirs.pass_rate)
    # both kinds of verdict occur (the comparison is not vacuous)
    passed = sum(r.passed for r in theirs.scenario_results)
    assert 0 < passed < len(theirs.scenario_results)
    # scenarios come back whole: names, inputs, expectations, tags, scorers
    by_name = {r.scenario.name: r.scenario for r in ours.scenario_results}
    for t in theirs.scenario_results:
        o = by_name[t.scenario.name]
        for field in (
            "input", "expected_output", "expected_tools", "expected_tool_args", "tags", "scorers",
            "metadata",
        ):  # fmt: skip
            assert getattr(o, field) == getattr(t.scenario, field), (t.scenario.name, field)
    # what the adapter returned is scored as it returned it (output and tool calls mapped)
    sr = next(r for r in ours.scenario_results if r.scenario.name == "all good")
    assert sr.agent_result.output == "It is 15 degrees in London."
    assert [(c.name, c.arguments) for c in sr.agent_result.tool_calls] == [
        ("get_weather", {"location": "London"})
    ]
    assert json.loads(sr.agent_result.tool_calls[0].result) == {"ok": True}
    boom = next(r for r in ours.scenario_results if r.scenario.name == "agent raises")
    assert not boom.passed and "RuntimeError: the agent broke" in (boom.error or "")


def test_similarity_scenarios_agree_with_the_same_model(work: Path) -> None:
    """AgenticAssure's similarity scorer loads all-MiniLM-L6-v2 through sentence-transformers;
    here it gets the same model's embeddings (tracereplay's offline copy) as its ``_model``."""
    from tracereplay.checks import minilm

    try:
        minilm.embed("probe")
    except minilm.EmbeddingUnavailable:
        pytest.skip("the embeddings extra is not installed")
    import numpy as np
    from agenticassure.scorers.base import get_scorer

    class MiniLM:
        def encode(self, texts: list[str]) -> Any:
            return np.stack([minilm.embed(t) for t in texts])

    scorer: Any = get_scorer("similarity")
    scorer._model = MiniLM()
    try:
        suite_file = work / "similarity.yaml"
        suite_file.write_text(SIMILARITY, encoding="utf-8")
        theirs = _agenticassure(work, suite_file)
    finally:
        scorer._model = None
    ours = _ours(work, suite_file, "aa-similarity")
    assert len(ours.scenario_results) == 4
    assert _compare(theirs, ours) == []
    assert [r.passed for r in theirs.scenario_results] == [True, True, False, False]
    for t, o in zip(theirs.scenario_results, ours.scenario_results):
        for ts, os_ in zip(t.scores, o.scores):
            assert os_.score == pytest.approx(ts.score, abs=1e-5)


def test_suite_config_runs_as_agenticassure_runs_it(work: Path) -> None:
    """``retries`` and ``fail_fast`` from the suite's config: a flaky scenario passes on its
    retry, and the run stops after the first failure, in both."""
    suite_file = work / "control.yaml"
    suite_file.write_text(RUN_CONTROL, encoding="utf-8")
    theirs = _agenticassure(work, suite_file)
    ours = _ours(work, suite_file, "aa-run-control", "--concurrency", "1")
    assert [r.scenario.name for r in theirs.scenario_results] == [
        "recovers on retry", "passes", "fails",
    ]  # fmt: skip
    assert _compare(theirs, ours) == []
    assert len(ours.scenario_results) == 3
    assert [r.retry_count for r in ours.scenario_results] == [
        r.retry_count for r in theirs.scenario_results
    ]
    # the command line overrides the suite's defaults
    done = _tracereplay(
        work, "eval", "aa-run-control", "--agent", "aa_support_agent:SupportAgent",
        "--no-fail-fast", "--retries", "0", "--concurrency", "1", "--format", "testing-api-json",
    )  # fmt: skip
    results = json.loads(done.stdout)
    assert len(results) == 4  # no fail-fast: every case ran
    assert results[0]["status"] == "ERROR"  # no retry: the flaky first attempt is the result
