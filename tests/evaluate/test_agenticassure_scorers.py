"""Property: for any scenario and agent result, the checks ``suite import`` makes of an
AgenticAssure scenario's scorers (passfail, exact, regex) pass exactly when AgenticAssure
0.4.0's own scorers pass."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("agenticassure", reason="the agenticassure test extra")
from agenticassure.results import AgentResult as AaResult  # noqa: E402
from agenticassure.results import ToolCall  # noqa: E402
from agenticassure.scenario import Scenario  # noqa: E402
from agenticassure.scorers.base import get_scorer  # noqa: E402

from tracereplay.checks import run_check  # noqa: E402
from tracereplay.checks.subject import CheckSubject  # noqa: E402
from tracereplay.promote.foreign import agenticassure as convert  # noqa: E402
from tracereplay.promote.suite_file import Problem  # noqa: E402
from tracereplay.replay.agent_loader import from_agenticassure  # noqa: E402
from tracereplay.scoring.verdicts import resolve_checks  # noqa: E402

TEXT = st.text(alphabet="aAbBßSsİi \t\n.!7-", max_size=12)
TOOLS = st.sampled_from(["get_weather", "search", "calc"])
VALUES = st.one_of(
    st.integers(-2, 2), st.sampled_from([1.0, 0.0, True, False, "1", "London", None])
)
ARGS = st.dictionaries(st.sampled_from(["location", "unit", "x"]), VALUES, max_size=3)
PATTERNS = st.one_of(st.none(), st.sampled_from([r"\d+", "^a", "(", "ß|ss", r"\s$", "[A-Z]"]))


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": "s", "input": "q"}
    if draw(st.booleans()):
        raw["expected_output"] = draw(TEXT)
    if draw(st.booleans()):
        raw["expected_tools"] = draw(st.lists(TOOLS, max_size=3))
    if draw(st.booleans()):
        raw["expected_tool_args"] = draw(st.dictionaries(TOOLS, ARGS, max_size=2))
    metadata: dict[str, Any] = {}
    pattern = draw(PATTERNS)
    if pattern is not None:
        metadata["regex_pattern"] = pattern
    if draw(st.booleans()):
        metadata["exact_normalize"] = draw(st.sampled_from([True, False, 0, "yes", None]))
    raw["metadata"] = metadata
    raw["scorers"] = draw(
        st.lists(st.sampled_from(["passfail", "exact", "regex"]), min_size=1, max_size=3)
    )
    return raw


@st.composite
def results(draw: Any) -> AaResult:
    calls = draw(st.lists(st.tuples(TOOLS, ARGS), max_size=4))
    return AaResult(output=draw(TEXT), tool_calls=[ToolCall(name=n, arguments=a) for n, a in calls])


@settings(max_examples=400, deadline=None)
@given(raw=scenarios(), result=results())
@example(  # str.lower, not casefold: "ß" stays "ß" where casefold makes it "ss"
    raw={"name": "s", "input": "q", "expected_output": " SS", "scorers": ["exact"]},
    result=AaResult(output="ß"),
)
@example(  # the first call of a tool is the one compared
    raw={"name": "s", "input": "q", "expected_tool_args": {"calc": {"x": 1}}},
    result=AaResult(
        output="a",
        tool_calls=[
            ToolCall(name="calc", arguments={"x": 2}),
            ToolCall(name="calc", arguments={"x": 1}),
        ],
    ),
)
def test_imported_checks_pass_exactly_when_agenticassure_scorers_pass(
    raw: dict[str, Any], result: AaResult
) -> None:
    problems: list[Problem] = []
    imported = convert.convert(
        {"scenarios": [raw]},
        "t.yaml",
        None,
        problems,
    )
    if imported is None:  # what tracereplay cannot hold: a blank input, never drawn here
        pytest.fail(f"not imported: {[p.message for p in problems]}")
    suite = imported.parsed.suite
    case = imported.parsed.cases[0].case
    ours = from_agenticassure(result)
    subject = CheckSubject(case=case, result=ours)
    scores = [run_check(spec, subject) for spec in resolve_checks(case, suite.checks)]
    scenario = Scenario(**raw)
    theirs = [get_scorer(name).score(scenario, result) for name in dict.fromkeys(scenario.scorers)]
    assert [s.passed for s in scores] == [t.passed for t in theirs], (scores, theirs)
