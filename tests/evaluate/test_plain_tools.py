"""The no-framework fallback on real modules: a plain loop's tool functions found by name (module
level, name -> function tables, lists), answered through the replay's interceptor for the
attempt and put back after; the tool results of LLM requests counted for the airtight check;
and what ``--agent`` refuses, in one line."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.evaluate.replay.agent_loader import AgentLoadError, is_adapter_run, load_agent
from tracereplay.evaluate.replay.airtight import ran_live
from tracereplay.evaluate.replay.llm.sent_results import SentResults, results_per_tool
from tracereplay.evaluate.replay.recorded_tools import RecordedToolError, recorded_exception
from tracereplay.sdk import tool_interceptor

LOOP = """
import tracereplay

RAN = []

def get_weather(city):
    RAN.append(("get_weather", city))
    return f"{city}: sunny"

async def get_forecast(city, days):
    RAN.append(("get_forecast", city))
    return f"{city}: dry for {days} days"

def _lookup(name):
    RAN.append(("lookup", name))
    return "found"

@tracereplay.tool
def decorated(x):
    RAN.append(("decorated", x))
    return x

TOOLS = {"get_weather": get_weather, "search": _lookup}
TOOL_LIST = [get_forecast]

def agent(query):
    return TOOLS["get_weather"](query) + " / " + get_weather(query)

class Runner:
    def run(self, task, *, context):
        return task

class Adapter:
    def run(self, input, context=None):
        return {"output": input, "tool_calls": []}

class FrameworkLike:
    def run(self, messages=None, **kwargs):
        return messages

THING = Runner()
OTHER = FrameworkLike()
NUMBER = 42
"""


@pytest.fixture
def loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A plain loop module (``plain_loop``) imported from a temporary directory."""
    (tmp_path / "plain_loop.py").write_text(textwrap.dedent(LOOP))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("plain_loop", None)
    module = importlib.import_module("plain_loop")
    yield module
    sys.modules.pop("plain_loop", None)


def answers(name: str, arguments: dict) -> str:
    return f"recorded {name}({arguments})"


def test_module_functions_and_table_entries_are_answered_by_name(loop: ModuleType) -> None:
    agent = load_agent("plain_loop:agent")
    assert agent.plain is not None and agent.framework is None
    originals = (loop.get_weather, loop.TOOLS["get_weather"], loop.TOOLS["search"])
    with agent.plain.answering({"get_weather", "search", "get_forecast"}) as places:
        # get_weather and get_forecast at module level; get_weather in TOOLS, search as its key;
        # get_forecast in the list
        assert places == 5
        with tool_interceptor(answers):
            out = agent.fn("Oslo")
            searched = loop.TOOLS["search"]("q")
            forecast = asyncio.run(loop.TOOL_LIST[0]("Oslo", 2))
        assert (
            out == "recorded get_weather({'city': 'Oslo'}) / recorded get_weather({'city': 'Oslo'})"
        )
        assert searched == "recorded search({'name': 'q'})"
        assert forecast == "recorded get_forecast({'city': 'Oslo', 'days': 2})"
        assert loop.RAN == []
        # outside any replay's context the replacement runs the real function
        assert loop.get_weather("Rome") == "Rome: sunny"
    assert (loop.get_weather, loop.TOOLS["get_weather"], loop.TOOLS["search"]) == originals
    assert loop.RAN == [("get_weather", "Rome")]


def test_the_agent_itself_and_decorated_tools_are_left_alone(loop: ModuleType) -> None:
    agent = load_agent("plain_loop:agent")
    assert agent.plain is not None
    decorated, fn = loop.decorated, loop.agent
    with agent.plain.answering({"agent", "decorated", "NUMBER", "missing"}) as places:
        assert places == 0
        assert (loop.decorated, loop.agent) == (decorated, fn)


def test_attempts_at_once_share_the_replacement_until_the_last_ends(loop: ModuleType) -> None:
    plain = load_agent("plain_loop:agent").plain
    assert plain is not None
    original = loop.get_weather
    with plain.answering({"get_weather"}):
        replaced = loop.get_weather
        with plain.answering({"get_weather"}) as places:
            assert places == 2 and loop.get_weather is replaced
        assert loop.get_weather is replaced  # the first attempt still runs
    assert loop.get_weather is original


def test_results_are_counted_per_tool_in_every_api() -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                {"id": "2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "1", "content": "x"},
            {"role": "tool", "tool_call_id": "2", "content": "y"},
            {"role": "assistant", "tool_calls": [
                {"id": "3", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "3", "content": "z"},
        ]
    }  # fmt: skip
    responses = {
        "input": [
            {"role": "user", "content": "q"},
            {"type": "function_call", "call_id": "1", "name": "a", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "1", "output": "x"},
        ]
    }
    anthropic = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "b", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "y"}]},
        ]
    }  # fmt: skip
    sent = SentResults()
    sent.add("chat", chat)
    sent.add("chat", {"messages": chat["messages"][:4]})  # an earlier request: fewer results
    assert sent.counts() == Counter({"a": 2, "b": 1})
    sent = SentResults()
    sent.add("responses", responses)
    sent.add("anthropic", anthropic)
    assert sent.counts() == Counter({"a": 1, "b": 1})
    assert results_per_tool("chat", {"messages": chat["messages"][:2]}) == Counter()


def test_a_result_the_interceptor_never_gave_is_a_tool_that_ran_live() -> None:
    assert ran_live([], None, Counter({"a": 1}), Counter({"a": 1})) is None
    assert ran_live([], None, Counter({"a": 1}), Counter({"a": 2})) == "a"
    assert ran_live([], None, Counter(), Counter({"b": 1})) == "b"


def test_a_recorded_generic_error_is_raised_with_its_message() -> None:
    """``Error: <message>`` (read from the tool result a loop gave its model): the same loop
    writing ``f"Error: {exc}"`` gives the model the same text again."""
    exc = recorded_exception("Error: unknown city: Atlantis")
    assert isinstance(exc, RecordedToolError)
    assert str(exc) == "unknown city: Atlantis"
    assert str(recorded_exception("ValueError: bad")) == "bad"


class _Shapes:
    def aa(self, input, context=None): ...
    def aa_required(self, input, context): ...
    def keyword_context(self, task, *, context): ...
    def kwargs_only(self, messages=None, **kwargs): ...
    def keyword_first(self, *, task=None, context=None): ...
    def more_required(self, input, context=None, *, session): ...


@pytest.mark.parametrize(
    ("method", "adapter"),
    [
        ("aa", True),
        ("aa_required", True),
        ("keyword_context", False),
        ("kwargs_only", False),
        ("keyword_first", False),
        ("more_required", False),
    ],
)
def test_only_an_agenticassure_run_signature_is_an_adapter(method: str, adapter: bool) -> None:
    assert is_adapter_run(getattr(_Shapes(), method)) is adapter
    assert is_adapter_run(getattr(_Shapes, method), unbound=True) is adapter


def test_an_agenticassure_adapter_is_still_accepted(loop: ModuleType) -> None:
    agent = load_agent("plain_loop:Adapter")
    assert agent.call_sync("hi", [], {}).response == "hi"


@pytest.mark.parametrize(
    ("attr", "what"),
    [
        ("THING", "is a Runner whose run() is not an AgenticAssure adapter's"),
        ("Runner", "is a class whose run() is not an AgenticAssure adapter's"),
        ("OTHER", "is a FrameworkLike whose run() is not an AgenticAssure adapter's"),
        ("NUMBER", "is a int, not a callable"),
    ],
)
def test_an_object_it_cannot_run_is_refused_in_one_line(
    loop: ModuleType, attr: str, what: str
) -> None:
    with pytest.raises(AgentLoadError) as err:
        load_agent(f"plain_loop:{attr}")
    message = str(err.value)
    assert "\n" not in message
    assert what in message
    assert "pydantic-ai" in message and "AgenticAssure adapter" in message
    assert "@tracereplay.tool" in message


def test_the_refusal_is_the_one_docs_evaluating_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/evaluating.md's refusal line, for its ``my_agent:runner`` (the frameworks listed
    between "agent object of" and "or an AgenticAssure adapter" grow with the adapters)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "evaluating.md").read_text()
    (line,) = [x for x in doc.splitlines() if x.startswith("error: --agent 'my_agent:runner'")]
    head, _, rest = line.removeprefix("error: ").partition("an agent object of ")
    _, _, tail = rest.partition(", or an AgenticAssure adapter")
    (tmp_path / "my_agent.py").write_text(
        "class Runner:\n    def run(self, task, *, context):\n        return task\n\n"
        "runner = Runner()\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_agent", None)
    with pytest.raises(AgentLoadError) as err:
        load_agent("my_agent:runner")
    sys.modules.pop("my_agent", None)
    assert str(err.value).startswith(head + "an agent object of ")
    assert str(err.value).endswith(", or an AgenticAssure adapter" + tail)


@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), min_size=1, max_size=4),
        max_size=5,
    )
)
def test_every_answered_call_is_counted_once_for_its_tool(rounds: list) -> None:
    """Rounds of calls, each answered or not (a history need not be valid for the API): the
    counts are the answered calls per tool, whatever the order of the results."""
    messages: list[dict] = [{"role": "user", "content": "q"}]
    want: Counter[str] = Counter()
    n = 0
    for calls in rounds:
        ids = []
        for name, _ in calls:
            n += 1
            ids.append((f"c{n}", name))
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}}
                    for i, name in ids
                ],
            }
        )
        answered = [(i, name) for (i, name), (_, ok) in zip(ids, calls) if ok]
        for i, name in reversed(answered):  # results in any order, by call id
            messages.append({"role": "tool", "tool_call_id": i, "content": "r"})
            want[name] += 1
    sent = SentResults()
    sent.add("chat", {"messages": messages})
    assert sent.counts() == want
