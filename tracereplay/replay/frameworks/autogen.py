"""AutoGen AgentChat: an agent (``AssistantAgent``, any ``ChatAgent``) or a team
(``RoundRobinGroupChat``, ``SelectorGroupChat``, ``Swarm``...) run as AgentChat runs it, its tools
answered at AutoGen's tool layer.

``arun``: ``await obj.run(task=query)`` on a fresh conversation (an agent's ``on_reset``, a
team's ``reset``), one case at a time per object, the object's own state put back after
(``save_state`` / ``load_state``); the response is the text of the last chat message of the
``TaskResult``.

``intercept``: every tool an AgentChat agent calls (its ``FunctionTool`` s, handoff tools,
workbench tools) runs through ``BaseTool.run_json`` (``BaseStreamTool.run_json_stream`` for
stream tools), which opens AutoGen's ``execute_tool <name>`` span around the tool's ``run``. For
the replay both ask the recording first: the value is the tool's return value, as recorded
text (``AnsweredText``: the workbench's ``return_value_as_string`` gives it back as it is, also
for tools that format their own results, an ``AgentTool``'s ``TaskResult``...); a recorded
failure is raised inside the tool span, where the workbench makes it the error result the model
gets, as the real exception was; ``RUN_LIVE`` runs the real tool. A handoff tool (what
``Handoff.handoff_tool`` makes: it returns the handoff's message, which becomes the message the
next agent gets) is asked like any tool, but no instrumentation records its result (only the
next agent sees it): an empty recorded result is the handoff's own message.

``instrument``: AutoGen traces agents and tools through OpenTelemetry's global tracer provider
(the replay's) but records no content and no model call; when OpenLLMetry's OpenAI
instrumentation (``opentelemetry-instrumentation-openai``, what AutoGen's tracing guide uses)
is installed, it traces the model calls into the replay's provider for the replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    loaded_subclasses,
    mark_replayed,
    mro_names,
    wrapt_patch,
    wrapt_patch_each,
)
from tracereplay.replay.frameworks.instrumentors import instrumented

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["AutoGenAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_autogen_answer", default=None)
_tracing = SharedContext()

#: AgentChat's agent and team bases (``ChatAgent`` / ``Team`` are their interfaces)
_KINDS = ("BaseChatAgent", "ChatAgent", "BaseGroupChat", "Team")


class AnsweredText(str):
    """A tool result answered from the recording: already the text the model saw."""


def _ask(answer: ToolAnswer, name: str, args: Any) -> tuple[Any, Exception | None]:
    """The recording's answer for one call: ``(value, None)`` or ``(None, the failure)``; a
    text answer as ``AnsweredText``."""
    try:
        value = answer(name, dict(args or {}))
    except Exception as exc:
        return None, exc
    return (AnsweredText(value) if isinstance(value, str) else value), None


def _handoff_message(tool: Any) -> str | None:
    """The message of an AgentChat handoff tool (``Handoff.handoff_tool``'s function returns
    it and nothing else), None for any other tool."""
    func = getattr(tool, "_func", None)
    if callable(func) and getattr(func, "__qualname__", "").startswith("Handoff.handoff_tool."):
        message = func()
        return message if isinstance(message, str) else None
    return None


def _tool_classes(base: type) -> list[type]:
    """``base`` and every subclass loaded now that formats its own results."""
    return [base, *(c for c in loaded_subclasses(base) if "return_value_as_string" in vars(c))]


def _text_as_is(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``return_value_as_string(value)``: an answered text as it is."""
    value = args[0] if args else kwargs["value"]
    if isinstance(value, AnsweredText):
        return str(value)
    return wrapped(*args, **kwargs)


def _call(args: Any, cancellation_token: Any, call_id: str | None = None) -> tuple[Any, str | None]:
    """``(args, call_id)`` of a ``run_json`` / ``run_json_stream`` call."""
    return args, call_id


async def _run_json(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``BaseTool.run_json(args, cancellation_token, call_id)``, asking the replay first.

    Not ``ask``: the answer is marked (and a recorded failure raised) inside the
    ``execute_tool`` span opened for it, which the real ``run_json`` opens itself."""
    from autogen_core import trace_tool_span

    from tracereplay.sdk.replay_hook import RUN_LIVE, tool_interceptor

    answer = _answer.get()
    if answer is None:
        return await wrapped(*args, **kwargs)
    arguments, call_id = _call(*args, **kwargs)
    value, failure = _ask(answer, tool.name, arguments)
    if failure is None and value is RUN_LIVE:
        with tool_interceptor(None):  # the real tool: an @tracereplay.tool inside runs
            return await wrapped(*args, **kwargs)
    if failure is None and value == "":
        value = AnsweredText(_handoff_message(tool) or "")
    with trace_tool_span(
        tool_name=tool.name, tool_description=tool.description, tool_call_id=call_id
    ):
        mark_replayed()
        if failure is not None:
            raise failure
    return value


async def _run_json_stream(
    wrapped: Any, tool: Any, args: tuple, kwargs: dict
) -> AsyncIterator[Any]:
    """``BaseStreamTool.run_json_stream``, asking the replay first (as ``_run_json``)."""
    from autogen_core import trace_tool_span

    from tracereplay.sdk.replay_hook import RUN_LIVE, tool_interceptor

    answer = _answer.get()
    arguments, call_id = _call(*args, **kwargs)
    value, failure = (RUN_LIVE, None) if answer is None else _ask(answer, tool.name, arguments)
    if failure is None and value is RUN_LIVE:
        with tool_interceptor(None) if answer is not None else contextlib.nullcontext():
            async for item in wrapped(*args, **kwargs):
                yield item
        return
    with trace_tool_span(
        tool_name=tool.name, tool_description=tool.description, tool_call_id=call_id
    ):
        mark_replayed()
        if failure is not None:
            raise failure
    yield value


def _base_tool() -> Any:
    from autogen_core.tools import BaseTool

    return BaseTool


def _base_stream_tool() -> Any:
    from autogen_core.tools import BaseStreamTool

    return BaseStreamTool


_run_json_patch = wrapt_patch(_base_tool, "run_json", _run_json)
_run_json_stream_patch = wrapt_patch(_base_stream_tool, "run_json_stream", _run_json_stream)
# ``return_value_as_string`` of ``BaseTool`` and of every subclass loaded when the patch is
# installed that formats its own results
_formatters = wrapt_patch_each(
    lambda: _tool_classes(_base_tool()), "return_value_as_string", _text_as_is
)


class AutoGenAgent(FrameworkAgent):
    """An AutoGen AgentChat agent or team."""

    framework: ClassVar[str] = "autogen"
    distribution: ClassVar[str] = "autogen-agentchat"
    tested: ClassVar[tuple[str, ...]] = ("==0.7.*",)
    one_case_at_a_time = True  # a run's conversation lives on the object

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(
            n.startswith("autogen_agentchat.") and n.rpartition(".")[2] in _KINDS
            for n in mro_names(obj)
        )

    async def arun(self, query: str) -> str:
        # an agent keeps its model context and a team its conversation: each case starts
        # from a fresh one (as the recorded run did), one case at a time, and the object's own
        # state is put back after
        if getattr(self, "_run_lock", None) is None:
            self._run_lock = asyncio.Lock()
        async with self._run_lock:
            saved = await self.obj.save_state()
            await self._reset()
            try:
                result = await self.obj.run(task=query)
            finally:
                await self._reset()
                await self.obj.load_state(saved)
        return _final_text(result)

    async def _reset(self) -> None:
        if callable(getattr(self.obj, "on_reset", None)):  # an agent
            from autogen_core import CancellationToken

            await self.obj.on_reset(CancellationToken())
        else:  # a team
            await self.obj.reset()

    @contextlib.contextmanager
    def intercept(self, answer: ToolAnswer) -> Iterator[None]:
        with (
            _formatters.held(),
            _run_json_stream_patch.held(),
            _run_json_patch.answering(_answer, answer),
        ):
            yield

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        # OpenLLMetry's OpenAI instrumentation, when installed and not on already
        return _tracing.use(
            functools.partial(
                instrumented,
                "opentelemetry.instrumentation.openai",
                "OpenAIInstrumentor",
                tracer_provider,
            )
        )


def _final_text(result: Any) -> str:
    """The text of the last chat message (not an event) of a ``TaskResult``."""
    from autogen_agentchat.messages import BaseChatMessage

    for message in reversed(list(getattr(result, "messages", None) or ())):
        if isinstance(message, BaseChatMessage):
            return message.to_text()
    return ""
