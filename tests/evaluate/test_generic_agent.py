"""The generic adapter on agent objects of frameworks no adapter knows: the entry point picked,
the question passed as its signature wants it, the answer read from what comes back, and
``--agent-call``."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.replay.agent_loader import AgentLoadError, load_agent
from tracereplay.replay.generic_agent import answer_text, entry_point

AGENTS = """
from dataclasses import dataclass, field

@dataclass
class Output:
    content: str

@dataclass
class Reply:
    messages: list = field(default_factory=list)

class Signature:
    input_fields = {"question": None}

class Module:  # DSPy's shape: __call__(**kwargs) runs forward
    signature = Signature()

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError("too many positional arguments")
        return self.forward(**kwargs)

    def forward(self, **kwargs):
        return Output(content="module: " + kwargs["question"])

class KeywordOnly:
    def run(self, *, message, max_turns=None):
        return Reply(messages=[{"role": "user", "content": message},
                               {"role": "assistant", "content": "kw: " + message}])

class Async:
    async def arun(self, input):
        return {"output": "async: " + input}

class Crew:
    def kickoff(self, inputs=None):
        return Output(content="crew")

class Two:
    def run(self, query):
        return "run: " + query

    def answer(self, query):
        return "answer: " + query

class NoAnswer:
    def invoke(self, query):
        return 42

module = Module()
keyword_only = KeywordOnly()
async_agent = Async()
two = Two()
no_answer = NoAnswer()
"""


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    (tmp_path / "generic_agents.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("generic_agents", None)
    yield sys.modules.setdefault("generic_agents", __import__("generic_agents"))
    sys.modules.pop("generic_agents", None)


def test_a_module_is_called_by_its_one_declared_input(agents: ModuleType) -> None:
    agent = load_agent("generic_agents:module")
    assert agent.tools is not None and agent.framework is None
    assert agent.call_sync("Paris?", [], {}) == "module: Paris?"


def test_a_keyword_only_entry_point_gets_the_question_by_name(agents: ModuleType) -> None:
    assert load_agent("generic_agents:keyword_only").call_sync("hi", [], {}) == "kw: hi"


def test_an_async_entry_point_runs_and_its_output_is_read(agents: ModuleType) -> None:
    agent = load_agent("generic_agents:async_agent")
    assert agent.is_async
    assert asyncio.run(agent.call_async("hi", [], {})) == "async: hi"


def test_agent_call_names_the_entry_point(agents: ModuleType) -> None:
    assert load_agent("generic_agents:two").call_sync("q", [], {}) == "run: q"
    assert load_agent("generic_agents:two", "answer").call_sync("q", [], {}) == "answer: q"
    with pytest.raises(AgentLoadError) as err:
        load_agent("generic_agents:two", "missing")
    assert "it has no method missing()" in str(err.value) and "\n" not in str(err.value)


def test_an_answer_with_no_text_is_an_error_naming_the_entry_point(agents: ModuleType) -> None:
    from tracereplay.replay.agent_loader import AgentResultError

    agent = load_agent("generic_agents:no_answer")
    with pytest.raises(AgentResultError, match=r"no_answer\.invoke\(\) returned int"):
        agent.call_sync("q", [], {})


def test_forward_is_reached_through_call() -> None:
    class Torch:
        def __call__(self, x):
            return "call " + x

        def forward(self, x):
            return "forward " + x

    name, run = entry_point(Torch())
    assert name == "__call__" and run("x") == "call x"


@given(st.text(max_size=20))
def test_answers_are_read_from_every_common_shape(text: str) -> None:
    class Message:
        def __init__(self, content: object) -> None:
            self.content = content

    class Result:
        def __init__(self, **kw: object) -> None:
            self.__dict__.update(kw)

    shapes = [
        text,
        {"output": text},
        Result(final_output=text),
        Result(output=Result(content=text)),
        Result(messages=[{"role": "user", "content": "q"}, Message(text)]),
        Result(text=text),
        [Message([{"type": "text", "text": text}])],
    ]
    for shape in shapes:
        assert answer_text(shape) == text


def test_an_entry_point_that_yields_is_run_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An async generator entry point (Semantic Kernel's ``invoke``) whose items hold their
    message: the last item's text is the answer; a ``list[Message]`` parameter gets one user
    message of the framework's own class (``from_user``)."""
    (tmp_path / "yielding.py").write_text(
        textwrap.dedent(
            """
            class Message:
                def __init__(self, role, text):
                    self.role, self.text = role, text

                @classmethod
                def from_user(cls, text):
                    return cls("user", text)

            class Item:
                def __init__(self, message):
                    self.message = message

            class Agent:
                async def invoke(self, messages: "list[Message]"):
                    assert isinstance(messages[0], Message) and messages[0].role == "user"
                    yield Item(Message("assistant", "thinking"))
                    yield Item(Message("assistant", "done: " + messages[0].text))

            agent = Agent()
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("yielding", None)
    agent = load_agent("yielding:agent")
    assert agent.is_async
    assert asyncio.run(agent.call_async("hi", [], {})) == "done: hi"
    sys.modules.pop("yielding", None)


class Message:
    """A framework's chat message class (module level: annotations resolve by name)."""

    def __init__(self, role: str, content: str) -> None:
        self.role, self.content = role, content


def test_a_history_goes_into_a_parameter_named_like_a_conversation() -> None:
    """The generic adapter's best guess for a case's history: ``history``, ``chat_history``,
    ``message_history``... by keyword, as dicts or as the framework's message class."""
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]

    class Dicts:
        def run(self, message: str, chat_history: list[dict] | None = None) -> str:
            said = [m["content"] for m in chat_history or []]
            return " / ".join([*said, message])

    class Typed:
        def invoke(self, *, input: str, message_history: list[Message] = ()) -> str:  # noqa: A002
            return " / ".join([*(f"{m.role}:{m.content}" for m in message_history), input])

    class NoHistory:
        def run(self, query: str) -> str:
            return query

    _, call = entry_point(Dicts())
    assert call.takes_history and call("q", history) == "hi / hello / q"
    assert call("q") == "q"  # no history: the parameter keeps its default
    _, call = entry_point(Typed())
    assert call.takes_history and call("q", history) == "user:hi / assistant:hello / q"
    _, call = entry_point(NoHistory())
    assert not call.takes_history and call("q", history) == "q"
