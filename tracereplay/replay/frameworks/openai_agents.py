"""OpenAI Agents SDK (``openai-agents``): replay an ``agents.Agent`` as it is.

- **Run**: ``await Runner.run(agent, query)``; the response is ``result.final_output`` (a string
  as is, a pydantic model as its JSON, anything else ``str()``-ed). The replayer runs every
  attempt on one event loop of the process: the agent's async clients, made at import, keep
  connections bound to the loop that opened them, which a loop per case would break.
- **Tools**: every ``FunctionTool`` reachable from the agent is intercepted for the replay's
  duration: the agent's own tools, those of its handoff targets (``handoffs=[agent]`` or
  ``handoff(agent)`` objects, recursively) and of agents used as tools (``agent.as_tool()``).
  The SDK calls ``tool.on_invoke_tool(ctx, json_arguments)``; for tools built by
  ``@function_tool`` / ``function_tool()`` / ``as_tool()`` that invoker is the SDK's failure
  handling wrapper, and the adapter replaces the implementation *inside* it, so an answer that
  raises (a recorded failure) goes through the tool's ``failure_error_function`` exactly as a real
  tool exception does (the model gets the same error text, the span the same error). A
  ``FunctionTool`` built by hand gets its ``on_invoke_tool`` wrapped. An ``as_tool()`` tool is
  answered itself from the recording (the ``forecaster`` tool's recorded answer): the sub-agent
  does not run, and nothing is answered twice. Everything is restored on exit.
  Not reached: hosted tools (web/file search, code interpreter ...), which run at OpenAI, and
  tools an MCP server lists at run time; a tool span of those is not marked replayed, so an
  airtight replay reports it. Handoffs themselves are control flow, not tools: they run.
- **Spans**: the SDK has its own tracing (processors, by default exporting to OpenAI). During a
  replay the adapter's own processor (``openai_agents_spans.GenAiProcessor``) is the *only* SDK
  trace processor: it writes the SDK's agent, model and tool spans as GenAI spans on the
  replay's ``TracerProvider``, whatever traced the recording (OpenInference's or OpenLLMetry's
  instrumentor, Logfire, the SDK's own exporter) and whether or not one is installed where the
  agent runs. The processors the agent's code registered (an instrumentor's included) and the
  SDK's disabled flag are put back after; nothing is ever sent to OpenAI. Why not the
  installed instrumentor: OpenInference's cost about 4-5 ms of CPU a three-call case against
  well under 1 ms for the adapter's processor, and the replay reads the same runs from both.
  An answered tool's span is marked replayed as OpenTelemetry's current span: the processor
  makes the span it starts for the SDK's running (tool) span the current one.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    mark_replayed,
    mro_names,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["OpenAIAgentsAgent"]

T = TypeVar("T")

_AGENT_CLASSES = {"agents.agent.Agent"}


class OpenAIAgentsAgent(FrameworkAgent):
    """An OpenAI Agents SDK ``Agent``, run with ``Runner.run``."""

    framework = "openai-agents"
    distribution: ClassVar[str] = "openai-agents"
    tested: ClassVar[tuple[str, ...]] = ("==0.24.*",)
    takes_history: ClassVar[bool] = True  # as input items before the question
    records_tool_spans = True  # the SDK's function span, through an instrumentor or ours

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return not _AGENT_CLASSES.isdisjoint(mro_names(obj))

    async def arun(self, query: str, history: Sequence[Mapping[str, str]] = ()) -> str:
        from agents import Runner

        # the conversation before the question as input items (``{"role", "content"}``)
        given: Any = [*map(dict, history), {"role": "user", "content": query}] if history else query
        result = await Runner.run(self.obj, given, hooks=_handoff_hooks())
        return _text(result.final_output)

    @contextlib.contextmanager
    def intercept(self, answer: ToolAnswer) -> Iterator[None]:
        token = _answer.set(answer)
        _answers.add(answer)
        patched: list[int] = []
        try:
            for tool in _function_tools(self.obj):
                key = _patches.acquire(tool)
                if key is not None:
                    patched.append(key)
            yield
        finally:
            for key in patched:
                _patches.release(key)
            _answers.remove(answer)
            _answer.reset(token)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracing.use(functools.partial(_replay_tracing, tracer_provider))


@contextlib.contextmanager
def _replay_tracing(tracer_provider: TracerProvider) -> Iterator[None]:
    """The SDK's trace processors replaced by the adapter's (on ``tracer_provider``); put back
    on exit."""
    from agents import set_trace_processors
    from agents.tracing import get_trace_provider

    from tracereplay.replay.frameworks.openai_agents_spans import GenAiProcessor

    sdk_provider = get_trace_provider()
    saved = _saved_tracing(sdk_provider)
    try:
        # the only processor: nothing ever reaches the SDK's exporter to OpenAI, nor an
        # instrumentor's processor the agent's code registered (no call recorded twice)
        set_trace_processors([GenAiProcessor(tracer_provider)])
        sdk_provider.set_disabled(False)
        _instrumented.set()
        yield
    finally:
        _instrumented.clear()
        _restore_tracing(sdk_provider, saved)


# ---------------------------------------------------------------------------------- sharing
class ActiveAnswers:
    """The answers of the replays running now: a thread that did not inherit a replay's
    context can still be served when only one replay runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: list[ToolAnswer] = []

    def add(self, answer: ToolAnswer) -> None:
        with self._lock:
            self._active.append(answer)

    def remove(self, answer: ToolAnswer) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._active.remove(answer)

    def current(self, var: ContextVar[ToolAnswer | None]) -> ToolAnswer | None:
        answer = var.get()
        if answer is not None:
            return answer
        with self._lock:
            return self._active[0] if len(self._active) == 1 else None


_tracing = SharedContext()
#: set while the adapter's processor traces the SDK's spans for the replays (``_replay_tracing``)
_instrumented = threading.Event()

# ---------------------------------------------------------------------------------- tools
#: the answer of the replay this context belongs to
_answer: ContextVar[ToolAnswer | None] = ContextVar(
    "tracereplay_openai_agents_answer", default=None
)
_answers = ActiveAnswers()


class _ToolPatches:
    """Tools patched to ask the replay's answer first, refcounted across concurrent replays.

    For a tool built by ``function_tool`` / ``as_tool`` the SDK's failure-handling invoker is
    kept and the implementation it calls replaced, so a raised answer goes through the tool's
    ``failure_error_function`` as a real exception does; any other ``FunctionTool`` gets its
    ``on_invoke_tool`` wrapped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._patched: dict[int, tuple[Any, str, Any, int]] = {}

    def acquire(self, tool: Any) -> int | None:
        invoker = tool.on_invoke_tool
        impl = getattr(invoker, "_invoke_tool_impl", None)
        target, attr = (
            (invoker, "_invoke_tool_impl") if callable(impl) else (tool, "on_invoke_tool")
        )
        key = id(target)
        with self._lock:
            entry = self._patched.get(key)
            if entry is None:
                original = getattr(target, attr)
                if getattr(original, "__tracereplay_answering__", False):
                    return None  # patched by an outer replay
                setattr(target, attr, _answering(original, tool))
                self._patched[key] = (target, attr, original, 1)
            else:
                self._patched[key] = (*entry[:3], entry[3] + 1)
        return key

    def release(self, key: int) -> None:
        with self._lock:
            target, attr, original, users = self._patched[key]
            if users > 1:
                self._patched[key] = (target, attr, original, users - 1)
                return
            del self._patched[key]
            setattr(target, attr, original)


_patches = _ToolPatches()


def _answering(original: Callable[[Any, str], Any], tool: Any) -> Callable[[Any, str], Any]:
    """``original(ctx, input_json)`` with the call asked of the replay's answer first."""

    @functools.wraps(original)
    async def invoke(ctx: Any, input: str) -> Any:  # noqa: A002 - the SDK's parameter name
        answer = _answers.current(_answer)
        arguments = _arguments(input)
        if answer is None or arguments is None:
            # no replay here, or not JSON (the SDK's own parsing reports it, nothing runs)
            return await original(ctx, input)
        name = getattr(ctx, "tool_name", None) or tool.name
        try:
            value = answer(name, arguments)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            if _is_recorded_failure(exc):
                _mark()
            raise
        if _is_run_live(value):
            from tracereplay.sdk.replay_hook import tool_interceptor

            with tool_interceptor(None):  # asked already: an @tracereplay.tool inside runs
                return await original(ctx, input)
        if hasattr(ctx, "_function_tool_arguments"):
            ctx._function_tool_arguments = None  # what the real implementation consumes
        _mark()
        return value

    invoke.__tracereplay_answering__ = True  # type: ignore[attr-defined]
    return invoke


def _handoff_hooks() -> Any:
    """Run hooks that account for handoffs during a replay.

    A handoff is the SDK's control flow, not a user tool: it runs as it ran in production. Its
    recorded call (``transfer_to_<agent>``) is still taken from the recording, so a handoff the
    source run did not make is drift (the answer raises and the case is an ERROR), and its span
    is marked replayed (the SDK calls ``on_handoff`` inside the handoff span). The hook receives
    no arguments: handoffs with an input type are asked for with ``{}``."""
    from agents import RunHooks

    class _ReplayHandoffs(RunHooks):
        async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
            answer = _answers.current(_answer)
            if answer is None:
                return
            try:
                value = answer(_handoff_tool_name(from_agent, to_agent), {})
                if inspect.isawaitable(value):
                    await value
            except Exception as exc:
                if not _is_recorded_failure(exc):
                    raise
            _mark()

    return _ReplayHandoffs()


def _handoff_tool_name(from_agent: Any, to_agent: Any) -> str:
    """The tool name the model called to hand ``from_agent``'s turn to ``to_agent``."""
    from agents import Handoff

    for target in getattr(from_agent, "handoffs", None) or ():
        if isinstance(target, Handoff):
            if target.agent_name == getattr(to_agent, "name", None):
                return target.tool_name
        elif target is to_agent:
            break
    return Handoff.default_tool_name(to_agent)


def _arguments(input: str) -> dict[str, Any] | None:  # noqa: A002
    if not input or not input.strip():
        return {}
    try:
        value = json.loads(input)
    except ValueError:
        return None
    return value if isinstance(value, dict) else {"value": value}


def _mark() -> None:
    """``mark_replayed()`` on the OTel span of the SDK's current (tool or handoff) span: the
    adapter's processor makes the OTel span it starts for an SDK span the current one while the
    SDK span runs. Outside the replay's tracing the answer is only counted (the current span is
    then no tool span)."""
    if _instrumented.is_set():
        mark_replayed()
        return
    from opentelemetry import trace

    with trace.use_span(trace.INVALID_SPAN, end_on_exit=False):
        mark_replayed()


def _function_tools(root: Any) -> list[Any]:
    """Every FunctionTool of ``root``, its handoff targets and agent-as-tool agents."""
    from agents import FunctionTool

    tools: list[Any] = []
    seen_agents: set[int] = set()
    seen_tools: set[int] = set()
    pending = [root]
    while pending:
        agent = pending.pop()
        if agent is None or id(agent) in seen_agents:
            continue
        seen_agents.add(id(agent))
        for tool in getattr(agent, "tools", None) or ():
            if isinstance(tool, FunctionTool) and id(tool) not in seen_tools:
                seen_tools.add(id(tool))
                tools.append(tool)
                inner = getattr(tool, "_agent_instance", None)
                if inner is not None:  # agent.as_tool(): its agent's tools too (RUN_LIVE)
                    pending.append(inner)
        for target in getattr(agent, "handoffs", None) or ():
            ref = getattr(target, "_agent_ref", None)
            if ref is not None:  # a Handoff object: its agent (weakly referenced)
                pending.append(ref())
            elif hasattr(target, "tools"):
                pending.append(target)
    return tools


def _is_recorded_failure(exc: BaseException) -> bool:
    """An exception that *is* the recorded answer (a recorded tool failure), not a miss."""
    from tracereplay.replay.answering.recorded_tools import RecordedToolError

    return isinstance(exc, RecordedToolError)


def _is_run_live(value: Any) -> bool:
    from tracereplay.sdk.replay_hook import RUN_LIVE

    return value is RUN_LIVE


# ---------------------------------------------------------------------------------- tracing
# The SDK can set its trace processors and its disabled flag but not read them back, so what a
# replay changes is saved from its provider's private attributes: here only, and probed by
# tests/evaluate/test_replay_openai_agents.py in the pinned SDK (it fails when they move).
def _registered_processors(sdk_provider: Any) -> list[Any] | None:
    """The SDK's registered trace processors (None when they cannot be read)."""
    multi = getattr(sdk_provider, "_multi_processor", None)
    processors = getattr(multi, "_processors", None)
    return list(processors) if isinstance(processors, (list, tuple)) else None


def _saved_tracing(sdk_provider: Any) -> tuple[list[Any] | None, bool | None]:
    """What a replay changes in the SDK's tracing: its processors and its manual disabled flag
    (``None``: never set, the environment decides)."""
    return _registered_processors(sdk_provider), getattr(sdk_provider, "_manual_disabled", None)


def _restore_tracing(sdk_provider: Any, saved: tuple[list[Any] | None, bool | None]) -> None:
    """Put back what ``_saved_tracing`` saved."""
    from agents import set_trace_processors

    processors, manual_disabled = saved
    if processors is not None:
        set_trace_processors(processors)
    if hasattr(sdk_provider, "_refresh_disabled_flag"):
        sdk_provider._manual_disabled = manual_disabled
        sdk_provider._refresh_disabled_flag()
    elif manual_disabled is not None:
        sdk_provider.set_disabled(manual_disabled)


# ---------------------------------------------------------------------------------- helpers
def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    dump = getattr(output, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    return str(output)
