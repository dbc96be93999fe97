"""Tool functions answered wherever the agent's code holds them, on real modules: found by name
(module level, name -> function tables, lists, methods, framework-style tool objects, closures,
other modules of the user's code), their code swapped for the attempt and put back after; the
tool results of LLM requests counted for the airtight check; the generic adapter's entry
points; and what ``--agent`` refuses, in one line."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.replay.agent_loader import AgentLoadError, is_adapter_run, load_agent
from tracereplay.replay.answering.airtight import ran_live
from tracereplay.replay.answering.llm.sent_results import SentResults, results_per_tool
from tracereplay.replay.answering.recorded_tools import RecordedToolError, recorded_exception
from tracereplay.replay.answering.tool_functions import ToolFunctions, trampoline
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


def mine(tools: ToolFunctions, names: set[str], module: str = "plain_loop") -> list[str]:
    """The qualified names of the functions answering ``names`` in ``module``."""
    return [f.__qualname__ for _, f in tools.functions(names) if f.__module__ == module]


def answers(name: str, arguments: dict) -> str:
    return f"recorded {name}({arguments})"


def test_module_functions_and_table_entries_are_answered_by_name(loop: ModuleType) -> None:
    agent = load_agent("plain_loop:agent")
    assert agent.tools is not None and agent.framework is None
    originals = (loop.get_weather, loop.TOOLS["get_weather"], loop.TOOLS["search"])
    names = {"get_weather", "search", "get_forecast"}
    # get_weather (module level and in TOOLS: one function), search (TOOLS' key for _lookup),
    # get_forecast (module level and in the list: one function); the test process's other
    # user modules (the test harness's weather tools) count too
    assert sorted(mine(agent.tools, names)) == ["_lookup", "get_forecast", "get_weather"]
    with agent.tools.answering(names):
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
        # outside any replay's context the function runs as it is
        assert loop.get_weather("Rome") == "Rome: sunny"
    assert (loop.get_weather, loop.TOOLS["get_weather"], loop.TOOLS["search"]) == originals
    assert loop.get_weather("Oslo") == "Oslo: sunny"
    assert loop.RAN == [("get_weather", "Rome"), ("get_weather", "Oslo")]


def test_the_agent_itself_and_decorated_tools_are_left_alone(loop: ModuleType) -> None:
    agent = load_agent("plain_loop:agent")
    assert agent.tools is not None
    codes = (loop.decorated.__code__, loop.agent.__code__)
    with agent.tools.answering({"agent", "decorated", "NUMBER", "missing"}):
        assert mine(agent.tools, {"agent", "decorated", "NUMBER", "missing"}) == []
        assert (loop.decorated.__code__, loop.agent.__code__) == codes


def test_attempts_at_once_share_the_swap_until_the_last_ends(loop: ModuleType) -> None:
    tools = load_agent("plain_loop:agent").tools
    assert tools is not None
    original = loop.get_weather.__code__
    with tools.answering({"get_weather"}):
        swapped = loop.get_weather.__code__
        assert swapped is not original
        with tools.answering({"get_weather"}):
            assert loop.get_weather.__code__ is swapped
        assert loop.get_weather.__code__ is swapped  # the first attempt still runs
    assert loop.get_weather.__code__ is original


HOLDERS = """
import functools

RAN = []

class Tool:  # a framework's tool object: its name, the user's function inside
    def __init__(self, name, func):
        self.name = name
        self.func = func

class Toolkit:  # a plugin whose methods are the tools
    def lookup_city(self, city, *, unit="C"):
        RAN.append(("lookup_city", city))
        return city

    async def alookup(self, city):
        RAN.append(("alookup", city))
        return city

def make_tool():
    prefix = "weather in "
    def closed_over(city: str, days: int = 1) -> str:
        "A closure's tool."
        RAN.append(("closed_over", city))
        return prefix + city
    return closed_over

def renamed_impl(city):
    RAN.append(("renamed", city))
    return city

def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        RAN.append(("wrapper", fn.__name__))
        return fn(*args, **kwargs)
    return wrapper

@logged
def wrapped(city):
    RAN.append(("wrapped", city))
    return city

KIT = Toolkit()
AGENT = {"tools": [Tool("renamed", renamed_impl), Tool("closed", make_tool())],
         "bound": [KIT.lookup_city, KIT.alookup]}
"""


def test_tools_are_answered_wherever_the_code_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held by a framework-style tool object under another name, closures, bound methods of a
    toolkit (sync and async), a decorator's wrapper, in a module the agent only imports: each
    answered by the tool's name, its signature unchanged, the call's own arguments recorded."""
    (tmp_path / "holders.py").write_text(textwrap.dedent(HOLDERS))
    (tmp_path / "holder_agent.py").write_text("import holders\n\ndef agent(q):\n    return q\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("holders", "holder_agent"):
        sys.modules.pop(name, None)
    agent = load_agent("holder_agent:agent")
    holders = sys.modules["holders"]
    tools, bound = holders.AGENT["tools"], holders.AGENT["bound"]
    before = [inspect.signature(f) for f in (tools[1].func, bound[0], bound[1])]
    names = {"renamed", "closed", "lookup_city", "alookup", "wrapped"}
    assert agent.tools is not None
    # the wrapper and the function it wraps both answer "wrapped"
    assert len(mine(agent.tools, names, "holders")) == 6
    with agent.tools.answering(names):
        assert [inspect.signature(f) for f in (tools[1].func, bound[0], bound[1])] == before
        assert inspect.iscoroutinefunction(bound[1])
        with tool_interceptor(answers):
            assert tools[0].func("Oslo") == "recorded renamed({'city': 'Oslo'})"
            assert tools[1].func("Rome") == "recorded closed({'city': 'Rome'})"
            assert bound[0]("Bern") == "recorded lookup_city({'city': 'Bern'})"
            assert asyncio.run(bound[1]("Graz")) == "recorded alookup({'city': 'Graz'})"
            assert holders.wrapped("Nice") == "recorded wrapped({'city': 'Nice'})"
        assert holders.RAN == []
        assert tools[1].func("Rome") == "weather in Rome"  # no replay: the function itself
    assert holders.KIT.lookup_city("Bern") == "Bern"
    assert holders.RAN == [("closed_over", "Rome"), ("lookup_city", "Bern")]


def test_a_tool_inside_an_answered_tool_runs_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decorator's wrapper answered live (``RUN_LIVE``) calls the function it wraps: that is
    the same call, not a second one asking the recording."""
    from tracereplay.sdk import RUN_LIVE

    (tmp_path / "holders.py").write_text(textwrap.dedent(HOLDERS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("holders", None)
    agent = load_agent("holders:Tool")
    holders = sys.modules["holders"]
    asked: list[str] = []

    def live(name: str, arguments: dict) -> object:
        asked.append(name)
        return RUN_LIVE

    assert agent.tools is not None
    with agent.tools.answering({"wrapped"}), tool_interceptor(live):
        assert holders.wrapped("Nice") == "Nice"
    assert asked == ["wrapped"]
    assert holders.RAN == [("wrapper", "wrapped"), ("wrapped", "Nice")]


@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=0, max_size=5, unique=True),
    st.integers(min_value=0, max_value=5),
    st.booleans(),
    st.booleans(),
    st.lists(st.sampled_from(["k", "m", "n"]), max_size=3, unique=True),
    st.booleans(),
)
def test_the_trampoline_has_the_function_s_signature(
    positional: list[str],
    n_defaults: int,
    posonly: bool,
    var_pos: bool,
    keyword: list[str],
    var_kw: bool,
) -> None:
    """Any signature (positional-only, defaults, ``*args``, keyword-only, ``**kwargs``) keeps
    its parameters and the call's own arguments through the swap."""
    params = list(positional)
    if posonly and positional:
        params.insert(len(positional), "/")
    if var_pos:
        params.append("*rest")
    elif keyword:
        params.append("*")
    params += keyword
    if var_kw:
        params.append("**extra")
    n_defaults = min(n_defaults, len(positional))
    source = f"def tool({', '.join(params)}):\n    return ('ran', locals())\n"
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the test's own source
    fn = namespace["tool"]
    fn.__defaults__ = tuple(range(n_defaults)) or None
    signature = inspect.signature(fn)
    code = trampoline(fn.__code__, 0)
    assert code is not None
    fn.__code__ = code
    assert inspect.signature(fn) == signature


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
        ("THING", "is a Runner the replay cannot run (run() takes task, context, not a question"),
        ("Runner", "is a class the replay cannot run (point --agent at an instance)"),
        ("NUMBER", "is a int the replay cannot run (it has none of run(), arun(), invoke()"),
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
    assert "--agent-call NAME" in message


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


def test_a_qualified_tool_name_finds_the_method_of_its_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``WeatherPlugin-get_weather`` (Semantic Kernel's ``plugin-function``; ``a.b``, ``a__b``
    alike) is the ``get_weather`` method of the class ``WeatherPlugin``, not another one's."""
    (tmp_path / "plugins.py").write_text(
        "class WeatherPlugin:\n    def get_weather(self, city):\n        return city\n\n"
        "class OtherPlugin:\n    def get_weather(self, city):\n        return city\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("plugins", None)
    tools = ToolFunctions([importlib.import_module("plugins")], None)
    for name in (
        "WeatherPlugin-get_weather",
        "WeatherPlugin.get_weather",
        "WeatherPlugin__get_weather",
    ):
        assert mine(tools, {name}, "plugins") == ["WeatherPlugin.get_weather"], name
    sys.modules.pop("plugins", None)


def test_a_framework_s_own_tool_is_told_from_a_user_tool_out_of_reach(loop: ModuleType) -> None:
    """A tool no function of the user's code is, but a function of the framework's code is (a
    team's delegation), is the framework's own; a name nothing defines (a user's tool out of
    reach) is not, nor is a user's function, nor a ``@tracereplay.tool`` wrapper's name."""
    tools = load_agent("plain_loop:agent").tools
    assert tools is not None
    assert tools.frameworks_own("dumps")  # json.dumps: a function of library code
    assert not tools.frameworks_own("get_weather")  # the user's
    assert not tools.frameworks_own("decorated")  # a @tracereplay.tool of the user's
    assert not tools.frameworks_own("no_function_has_this_name")
