"""pydantic-ai: a ``pydantic_ai.Agent`` run as pydantic-ai runs it, its tools answered at the
tool manager.

``arun``: ``await agent.run(query)``; the response is ``result.output`` (text as is, anything
else as JSON).

``intercept``: every tool call of every pydantic-ai agent in the replay's context (the agent,
agents it runs from its tools, any toolset: function tools, MCP, ...) goes through
``ToolManager._raw_execute``, which calls ``toolset.call_tool(name, validated_args, ...)``
inside pydantic-ai's ``execute_tool`` span and its error handling. For the replay, that call is
given a toolset whose ``call_tool`` asks the recording first: the value is the tool's return
value; a recorded failure is raised where the tool would raise it (a recorded
``ToolFailedError``, pydantic-ai's failed tool result, comes back as ``ToolFailed`` with the
recorded text, which pydantic-ai reports to the model as it did; a recorded ``ModelRetry`` as
``ModelRetry``; anything else aborts the run as the real exception did).

``instrument``: when neither ``Agent.instrument_all()`` nor the agent's ``instrument=`` turned
pydantic-ai's OpenTelemetry on, it is on for the replay (content included), into the replay's
tracer provider, so the run has its agent, chat and tool spans.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    arun_live,
    ask,
    mro_names,
    wrapt_patch,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["PydanticAiAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_pydantic_ai_answer", default=None)


class _AnsweringToolset:
    """Stands in for the tool manager's toolset for one call: ``call_tool`` asks the recording."""

    def __init__(self, inner: Any, answer: ToolAnswer) -> None:
        self._inner = inner
        self._answer = answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        asked = ask(self._answer, name, dict(tool_args), failure=_as_tool_failure)
        if asked.live:
            return await arun_live(asked, self._inner.call_tool, name, tool_args, ctx, tool)
        return asked.value


def _as_tool_failure(exc: Exception) -> Exception:
    """A recorded failure as pydantic-ai's tools report it: a recorded ``ToolFailedError`` (the
    failed tool result pydantic-ai made of a ``ToolFailed``) is ``ToolFailed`` again, a recorded
    ``ToolRetryError`` is ``ModelRetry``; any other exception as it is."""
    from pydantic_ai.exceptions import ModelRetry, ToolFailed, ToolFailedError, ToolRetryError

    if isinstance(exc, ToolFailedError):
        return ToolFailed(str(exc))
    if isinstance(exc, ToolRetryError):
        return ModelRetry(str(exc))
    return exc


def _tool_manager() -> Any:
    from pydantic_ai.tool_manager import ToolManager

    return ToolManager


async def _raw_execute(wrapped: Any, manager: Any, args: tuple, kwargs: dict) -> Any:
    """``ToolManager._raw_execute``, its toolset's ``call_tool`` asking the replay first."""
    answer = _answer.get()
    if answer is None:
        return await wrapped(*args, **kwargs)
    answering = copy.copy(manager)  # shares its sets of failed/succeeded tools
    answering.toolset = _AnsweringToolset(manager.toolset, answer)
    return await wrapped.__func__(answering, *args, **kwargs)


_patch = wrapt_patch(_tool_manager, "_raw_execute", _raw_execute)
_instrumenting = SharedContext()


class PydanticAiAgent(FrameworkAgent):
    """A ``pydantic_ai.Agent`` (or any pydantic-ai ``AbstractAgent``)."""

    framework: ClassVar[str] = "pydantic-ai"
    distribution: ClassVar[str] = "pydantic-ai-slim"
    tested: ClassVar[tuple[str, ...]] = ("==2.68.*",)
    takes_history: ClassVar[bool] = True  # as ``message_history``

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(
            n.startswith("pydantic_ai.") and n.rpartition(".")[2] in ("Agent", "AbstractAgent")
            for n in mro_names(obj)
        )

    async def arun(self, query: str, history: Sequence[Mapping[str, str]] = ()) -> str:
        result = await self.obj.run(query, message_history=_model_messages(history) or None)
        output = result.output
        if isinstance(output, str):
            return output
        import orjson

        from tracereplay.sdk.content import json_default

        return orjson.dumps(output, default=json_default).decode()

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        if getattr(self.obj, "_instrument", None) is not None:  # the agent's own choice
            return contextlib.nullcontext()
        return _instrumenting.use(lambda: _instrument_all(tracer_provider))


def _model_messages(history: Sequence[Mapping[str, str]]) -> list[Any]:
    """A case's history as pydantic-ai's ``message_history``: a system or user message a
    ``ModelRequest`` part, an assistant message a ``ModelResponse`` (consecutive parts of one
    side kept in one message, as pydantic-ai keeps them)."""
    if not history:
        return []
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        UserPromptPart,
    )

    out: list[Any] = []
    for message in history:
        role, content = message.get("role"), message.get("content", "")
        if role == "assistant":
            if out and isinstance(out[-1], ModelResponse):
                out[-1].parts.append(TextPart(content))
            else:
                out.append(ModelResponse(parts=[TextPart(content)]))
            continue
        part = SystemPromptPart(content) if role == "system" else UserPromptPart(content)
        if out and isinstance(out[-1], ModelRequest):
            out[-1].parts.append(part)
        else:
            out.append(ModelRequest(parts=[part]))
    return out


@contextlib.contextmanager
def _instrument_all(tracer_provider: TracerProvider) -> Iterator[None]:
    """pydantic-ai's instrumentation on for every agent (content included, into the replay's
    tracer provider) unless ``Agent.instrument_all()`` turned it on already; put back after."""
    from pydantic_ai import Agent

    saved = Agent._instrument_default
    if not saved:
        from pydantic_ai.models.instrumented import InstrumentationSettings

        Agent.instrument_all(
            InstrumentationSettings(tracer_provider=tracer_provider, include_content=True)
        )
    try:
        yield
    finally:
        Agent._instrument_default = saved
