"""strands-agents: a strands ``Agent`` run as strands runs it, its tools answered through the
``BeforeToolCallEvent`` hook.

``arun``: ``await agent.invoke_async(query)`` on an empty conversation (the agent's own history
is put back after); the response is ``str(result)`` (the final message's text).

``intercept``: strands fires ``BeforeToolCallEvent`` before every tool execution of every agent
(the agent, agents its tools call, swarm and graph nodes), and a hook may replace the event's
``selected_tool``: the documented way to change which tool runs. For the replay, after the
agent's own hooks ran, the selected tool is replaced by one that answers from the recording:
it runs inside strands' tool span and error handling, so a recorded failure is raised there and
reaches the model as strands reports a tool error (``Error: <message>``), and the value is the
tool's result (text; anything else as JSON text). ``RUN_LIVE`` runs the selected tool itself.

strands before 1.0 (0.2: what pip resolves beside the newest opentelemetry-sdk) has no hooks:
its tools run through the agent's ``ToolHandler`` (``AgentToolHandler.process``, a generator
inside strands' tool span), so that is where a replay answers; a recorded failure comes back as
the error result strands' handler makes of an exception (``Error: <message>``, status error). Its
parallel tools run on the agent's thread pool, which does not carry context: during a case the
pool's ``submit`` runs each tool in a copy of the case's context. Its tool span is not the
current span, so the answer is marked on the span strands ends (``Tracer.end_tool_call_span``).
Which way is taken is decided by what the installed package offers, never by its version.

``instrument``: strands traces through OpenTelemetry's global tracer provider, which is the
replay's; strands 0.2's tracer took the provider once, when the first agent was made, so during
a replay it traces to the replay's.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    ToolAnswer,
    ask,
    mark_replayed,
    mro_names,
    wrapt_patch,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["StrandsAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_strands_answer", default=None)
#: the results this case answered (strands < 1.0: marked when strands ends their tool span)
_answered: ContextVar[set[int] | None] = ContextVar("tracereplay_strands_answered", default=None)


def has_hooks() -> bool:
    """Whether the installed strands has the hook system (``strands.hooks``, 1.x) the replay
    answers tools through; without it (0.2) tools are answered at the agent's tool handler."""
    try:
        return importlib.util.find_spec("strands.hooks") is not None
    except (ImportError, ValueError):
        return False


def _replay_tool(inner: Any, answer: ToolAnswer) -> Any:
    """An ``AgentTool`` standing in for ``inner``: answers from the recording."""
    from strands.types.tools import AgentTool

    class ReplayedTool(AgentTool):
        @property
        def tool_name(self) -> str:
            return inner.tool_name

        @property
        def tool_spec(self) -> Any:
            return inner.tool_spec

        @property
        def tool_type(self) -> str:
            return inner.tool_type

        async def stream(
            self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any
        ) -> AsyncIterator[Any]:
            from strands.types.events import ToolResultEvent

            # a recorded failure is raised: strands makes it the error result the model sees
            asked = ask(answer, tool_use["name"], lambda: dict(tool_use.get("input") or {}))
            if asked.live:
                async for event in inner.stream(tool_use, invocation_state, **kwargs):
                    yield event
                return
            value = asked.value
            yield ToolResultEvent(
                {
                    "toolUseId": str(tool_use.get("toolUseId")),
                    "status": "success",
                    "content": [{"text": value if isinstance(value, str) else _json(value)}],
                }
            )

    return ReplayedTool()


def _json(value: Any) -> str:
    import orjson

    from tracereplay.sdk.content import json_default

    return orjson.dumps(value, default=json_default).decode()


def _hook_registry() -> Any:
    from strands.hooks.registry import HookRegistry

    return HookRegistry


async def _invoke_callbacks_async(wrapped: Any, registry: Any, args: tuple, kwargs: dict) -> Any:
    """``HookRegistry.invoke_callbacks_async(event)``: after the hooks ran, a tool about to be
    called (a ``BeforeToolCallEvent`` not cancelled or interrupted) is the replay's stand-in."""
    from strands.hooks import BeforeToolCallEvent

    event, interrupts = await wrapped(*args, **kwargs)
    answer = _answer.get()
    if (
        answer is not None
        and isinstance(event, BeforeToolCallEvent)
        and not interrupts
        and not event.cancel_tool
        and event.selected_tool is not None
    ):
        event.selected_tool = _replay_tool(event.selected_tool, answer)
    return event, interrupts


def _error_result(tool_use: Any, exc: BaseException) -> dict[str, Any]:
    """The result strands' tool handler makes of a tool's exception."""
    return {
        "toolUseId": str(tool_use.get("toolUseId")),
        "status": "error",
        "content": [{"text": f"Error: {exc}"}],
    }


def _tool_handler() -> Any:
    from strands.handlers.tool_handler import AgentToolHandler

    return AgentToolHandler


def _tracer() -> Any:
    from strands.telemetry.tracer import Tracer

    return Tracer


def _process(wrapped: Any, handler: Any, args: tuple, kwargs: dict) -> Any:
    """strands < 1.0: ``AgentToolHandler.process(tool, ...)`` asks the case's answer first.

    Not ``ask``: a recorded failure is the error result strands would make (not raised), and
    the answer is marked replayed when strands ends its tool span (``_end_tool_call_span``),
    which does not exist yet here."""
    from tracereplay.sdk.replay_hook import RUN_LIVE

    answer, answered = _answer.get(), _answered.get()
    if answer is None or answered is None:
        return (yield from wrapped(*args, **kwargs))
    tool = args[0] if args else kwargs["tool"]
    try:
        value = answer(tool["name"], dict(tool.get("input") or {}))
    except Exception as exc:  # a recorded failure: the error result strands would make
        result = _error_result(tool, exc)
    else:
        if value is RUN_LIVE:
            return (yield from wrapped(*args, **kwargs))
        text = value if isinstance(value, str) else _json(value)
        result = {
            "toolUseId": str(tool.get("toolUseId")),
            "status": "success",
            "content": [{"text": text}],
        }
    answered.add(id(result))
    yield {"result": result}
    return result


def _span_and_result(span: Any, tool_result: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return span, tool_result


def _end_tool_call_span(wrapped: Any, tracer: Any, args: tuple, kwargs: dict) -> Any:
    """strands < 1.0: ``Tracer.end_tool_call_span(span, tool_result, ...)`` marks the span of a
    result that was answered."""
    span, tool_result = _span_and_result(*args, **kwargs)
    answered = _answered.get()
    if span is not None and answered is not None and id(tool_result) in answered:
        from opentelemetry import trace

        answered.discard(id(tool_result))
        with trace.use_span(span, end_on_exit=False):
            mark_replayed()
    return wrapped(*args, **kwargs)


#: strands 1.x: tools answered through the hook system
_hook_patch = wrapt_patch(_hook_registry, "invoke_callbacks_async", _invoke_callbacks_async)
#: strands < 1.0: tools answered at the agent's tool handler, marked where their span ends
_process_patch = wrapt_patch(_tool_handler, "process", _process)
_end_span_patch = wrapt_patch(_tracer, "end_tool_call_span", _end_tool_call_span)


class _ContextPool:
    """An agent's thread pool whose ``submit`` runs each call in a copy of the caller's context
    (strands < 1.0 runs parallel tools there; the case's answer lives in a ContextVar)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return self.pool.submit(contextvars.copy_context().run, fn, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


@contextlib.contextmanager
def _context_pool(agent: Any) -> Iterator[None]:
    """``agent.thread_pool`` carrying context for the block (when it has one: strands < 1.0)."""
    pool = getattr(agent, "thread_pool", None)
    if pool is None or not hasattr(pool, "submit") or has_hooks():
        yield
        return
    agent.thread_pool = _ContextPool(pool)
    try:
        yield
    finally:
        agent.thread_pool = pool


class _TracerSwap:
    """strands < 1.0's tracer (one per process) took a tracer from the global provider when the
    first agent was made: during replays it takes one from the replay's provider (refcounted)."""

    def __init__(self) -> None:
        self._users = 0
        self._saved: Any = None

    @contextlib.contextmanager
    def use(self, provider: TracerProvider) -> Iterator[None]:
        try:
            from strands.telemetry.tracer import get_tracer
        except ImportError:
            yield
            return
        instance = get_tracer()
        if has_hooks() or not hasattr(instance, "tracer"):
            yield
            return
        if self._users == 0:
            self._saved = (instance.tracer_provider, instance.tracer)
            instance.tracer_provider = provider
            instance.tracer = provider.get_tracer(instance.service_name)
        self._users += 1
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0:
                instance.tracer_provider, instance.tracer = self._saved
                self._saved = None


_tracer_swap = _TracerSwap()


class StrandsAgent(FrameworkAgent):
    """A strands ``Agent``."""

    framework: ClassVar[str] = "strands"
    distribution: ClassVar[str] = "strands-agents"
    tested: ClassVar[tuple[str, ...]] = ("==0.2.*", "==1.62.*")
    conversion_forms: ClassVar[tuple[str, ...]] = ("bedrock_converse",)
    one_case_at_a_time = True  # a run's conversation lives on the object

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(n.startswith("strands.") and n.endswith(".Agent") for n in mro_names(obj))

    async def arun(self, query: str) -> str:
        # a strands Agent keeps its conversation: each case starts from an empty one (as the
        # recorded run did), one case at a time, and the agent's own history is put back
        import asyncio

        if getattr(self, "_run_lock", None) is None:
            self._run_lock = asyncio.Lock()
        async with self._run_lock:
            saved = self.obj.messages
            self.obj.messages = []
            try:
                with _context_pool(self.obj):
                    result = await self.obj.invoke_async(query)
            finally:
                self.obj.messages = saved
        return str(result).strip()

    @contextlib.contextmanager
    def intercept(self, answer: ToolAnswer) -> Iterator[None]:
        token = _answered.set(set())
        try:
            if has_hooks():
                with _hook_patch.answering(_answer, answer):
                    yield
            else:
                with _process_patch.held(), _end_span_patch.answering(_answer, answer):
                    yield
        finally:
            _answered.reset(token)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracer_swap.use(tracer_provider)
