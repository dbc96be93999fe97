"""LangGraph: replay a compiled graph as it is (``StateGraph(...).compile()``, a ``Pregel``,
including what ``langchain.agents.create_agent`` and ``create_react_agent`` return).

- **Run**: ``await graph.ainvoke({"messages": [{"role": "user", "content": query}]})``; the
  response is the text of the last AI message of the final state (its ``.text``: string
  content, or the text blocks of list content). The replayer runs every attempt on one event
  loop of the process (``ChatOpenAI``'s async client outlives a loop per case).
- **Tools**: LangChain tools execute through ``BaseTool.run`` / ``BaseTool.arun`` (``ToolNode``
  calls ``tool.invoke`` / ``tool.ainvoke`` with the model's tool call, which end there). While a
  replay runs, those two methods are patched on ``BaseTool`` itself, so every tool execution in
  the process is reached: the agent's tools, the tools of sub-graphs, of graphs a tool invokes
  (agent-as-tool) and of tools created on the fly. The tool's arguments are the tool call's
  arguments as the tool sees them (injected arguments such as ``ToolRuntime`` or state left
  out, as the tool's span records them). An answered call still goes through ``BaseTool.run``:
  its callbacks (hence its tool span), its validation and its output formatting (a
  ``ToolMessage`` carrying the call's ``tool_call_id``) are the real ones; only the tool's body
  (``_run`` / ``_arun``) is replaced by the answer, and an exception raised by the answer is
  raised from there, so it reaches ``ToolNode``'s and middleware error handling
  (``ToolErrorMiddleware``, ``handle_tool_errors``) as a real tool exception does. A call of an
  agent-as-tool tool is answered itself: the inner graph does not run, nothing is answered twice.
  ``RUN_LIVE`` runs the real tool (with ``@tracereplay.tool`` interception off inside it, as it
  was asked already). Restored on exit.
- **Handoff tools** (a tool whose declared return type is LangGraph's ``Command``, e.g. a
  ``transfer_to_<agent>`` tool returning ``Command(goto=..., graph=Command.PARENT)``) route the
  graph: a ``Command`` cannot be restored from a recording. Such a call is still asked of the
  recording (an unrecorded or recorded-as-failed call fails the same way), and when the
  recording says it succeeded the tool itself runs to rebuild the ``Command``, as the OpenAI
  Agents SDK's handoffs run; its span is marked replayed.
- **Spans**: LangChain has no native OpenTelemetry. During a replay the adapter adds its own
  callback handler (``langchain_spans.GenAiCallbackHandler``) to every callback manager
  LangChain creates (``BaseCallbackManager.__init__`` patched, as OpenInference's instrumentor
  does), writing the agent, model and tool runs as GenAI spans on the replay's
  ``TracerProvider``, whatever instrumentation recorded the graph (OpenInference's, OpenLLMetry's,
  LangSmith's or none installed here). OpenInference's or OpenLLMetry's LangChain instrumentor,
  when the agent's code switched one on, is switched off for the replay (the handler records
  what it would); another instrumentation that adds a handler to every callback manager
  (OpenLIT's) stays, and its spans are the replay's: no call is recorded twice. The patch is
  removed on exit; an instrumentor switched off stays off (its tracer provider cannot be read
  back to switch it on again).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import typing
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    mark_replayed,
    mro_names,
    wrapt_patch,
)
from tracereplay.replay.frameworks.instrumentors import switch_off
from tracereplay.replay.frameworks.openai_agents import ActiveAnswers

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["LangGraphAgent"]

_GRAPH_CLASSES = {"langgraph.pregel.main.Pregel", "langgraph.pregel.Pregel"}


class LangGraphAgent(FrameworkAgent):
    """A compiled LangGraph graph whose state has ``messages``."""

    framework = "langgraph"
    distribution: ClassVar[str] = "langgraph"
    tested: ClassVar[tuple[str, ...]] = ("==1.2.*",)
    conversion_forms: ClassVar[tuple[str, ...]] = ("langchain",)
    takes_history: ClassVar[bool] = True  # as the first of the graph's messages

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return not _GRAPH_CLASSES.isdisjoint(mro_names(obj))

    async def arun(self, query: str, history: Sequence[Mapping[str, str]] = ()) -> str:
        # the conversation before the question heads the graph's ``messages``
        messages = [*map(dict, history), {"role": "user", "content": query}]
        state = await self.obj.ainvoke({"messages": messages})
        return _final_text(state)

    @contextlib.contextmanager
    def intercept(self, answer: ToolAnswer) -> Iterator[None]:
        token = _answer.set(answer)
        _answers.add(answer)
        try:
            with _run_patch.held(), _arun_patch.held():
                yield
        finally:
            _answers.remove(answer)
            _answer.reset(token)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracing.use(functools.partial(_replay_tracing, tracer_provider))


@contextlib.contextmanager
def _replay_tracing(tracer_provider: TracerProvider) -> Iterator[None]:
    global _handler
    from tracereplay.replay.frameworks.langchain_spans import GenAiCallbackHandler

    switch_off(_INSTRUMENTORS)  # theirs would record each call a second time
    if _traced_by_the_agent():
        yield  # its spans are the replay's, as they are its recording's
        return
    _handler = GenAiCallbackHandler(tracer_provider)
    try:
        with _manager_patch.held():
            yield
    finally:
        _handler = None


# ---------------------------------------------------------------------------------- response
def _final_text(state: Any) -> str:
    """The last AI message's text in the graph's final state."""
    messages = (
        state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    )
    for message in reversed(list(messages or ())):
        if _is_ai(message):
            return _message_text(message)
    return ""


def _is_ai(message: Any) -> bool:
    if isinstance(message, dict):
        return message.get("role") in ("assistant", "ai") or message.get("type") == "ai"
    return getattr(message, "type", None) in ("ai", "AIMessageChunk")


def _message_text(message: Any) -> str:
    if isinstance(message, dict):
        content = message.get("content")
    else:
        text = getattr(message, "text", None)
        if isinstance(text, str):  # langchain-core 1: a property (a str)
            return str(text)
        if callable(text):  # langchain-core < 1: a method
            text = text()
            if isinstance(text, str):
                return text
        content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


# ---------------------------------------------------------------------------------- tools
#: the answer of the replay this context belongs to
_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_langgraph_answer", default=None)


_answers = ActiveAnswers()
_tracing = SharedContext()


class _Outcome:
    """What the recording said about one call: a value, or an exception to raise."""

    __slots__ = ("error", "value")

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error

    @property
    def answered(self) -> bool:
        """The recording answered (a value, or a recorded failure), not a miss."""
        from tracereplay.replay.answering.recorded_tools import RecordedToolError

        return self.error is None or isinstance(self.error, RecordedToolError)


def _ask(tool: Any, tool_input: Any) -> _Outcome | None:
    """Ask the replay about a call of ``tool``: None to run the real tool (no replay, or
    RUN_LIVE), else the outcome the tool's body gives. Not ``ask``: the answer is marked (and
    a recorded failure raised) later, inside the tool's body, where its span is known
    (``_settle``), and a thread without the replay's context is still served (``_answers``)."""
    answer = _answers.current(_answer)
    if answer is None:
        return None
    from tracereplay.sdk.replay_hook import RUN_LIVE

    try:
        value = answer(tool.name, _arguments(tool, tool_input))
    except Exception as exc:
        return _Outcome(error=exc)
    if value is RUN_LIVE:
        return None
    return _Outcome(value)


def _base_tool() -> Any:
    from langchain_core.tools import BaseTool

    return BaseTool


def _tool_input(tool_input: Any, *args: Any, **kwargs: Any) -> Any:
    return tool_input


def _run(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``BaseTool.run(tool_input, ...)`` asking the replay's answer first: an answered call
    runs the real ``run`` on a copy of the tool whose body gives the answer."""
    outcome = _ask(tool, _tool_input(*args, **kwargs))
    if outcome is None:
        with _no_sdk_interceptor():
            return wrapped(*args, **kwargs)
    return wrapped.__func__(_answering(tool, outcome), *args, **kwargs)


async def _arun(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``BaseTool.arun``, as ``_run``."""
    outcome = _ask(tool, _tool_input(*args, **kwargs))
    if outcome is None:
        with _no_sdk_interceptor():
            return await wrapped(*args, **kwargs)
    return await wrapped.__func__(_answering(tool, outcome), *args, **kwargs)


#: ``BaseTool.run`` / ``arun`` asking the replay's answer first (while any replay runs)
_run_patch = wrapt_patch(_base_tool, "run", _run)
_arun_patch = wrapt_patch(_base_tool, "arun", _arun)


def _no_sdk_interceptor() -> contextlib.AbstractContextManager[None]:
    """``@tracereplay.tool`` interception off inside a tool the adapter already asked about
    (nothing is asked twice); nothing changes outside a replay."""
    if _answers.current(_answer) is None:
        return contextlib.nullcontext()
    from tracereplay.sdk.replay_hook import tool_interceptor

    return tool_interceptor(None)


def _answering(tool: Any, outcome: _Outcome) -> Any:
    """A per-call copy of ``tool`` whose body (``_run`` / ``_arun``) gives ``outcome``: the
    rest of ``BaseTool.run`` (callbacks, validation, output formatting) stays the real one."""
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool

    handoff = _is_handoff(tool)

    def _run(*args: Any, run_manager: Any = None, config: Any = None, **kwargs: Any) -> Any:
        _settle(outcome, run_manager)
        if handoff:  # a Command cannot be recorded: the tool rebuilds it
            real = tool._run
            with _no_sdk_interceptor():
                return real(*args, **_body_kwargs(real, kwargs, run_manager, config))
        return outcome.value

    async def _arun(*args: Any, run_manager: Any = None, config: Any = None, **kwargs: Any) -> Any:
        _settle(outcome, run_manager)
        if handoff:
            checked = tool._run if type(tool)._arun is BaseTool._arun else tool._arun
            with _no_sdk_interceptor():
                return await tool._arun(*args, **_body_kwargs(checked, kwargs, run_manager, config))
        return outcome.value

    # BaseTool.run passes ``config`` to a body that declares a RunnableConfig parameter
    _run.__annotations__ = {"config": RunnableConfig}
    _arun.__annotations__ = {"config": RunnableConfig}
    try:
        proxy = tool.model_copy()
    except Exception:
        proxy = copy.copy(tool)
    object.__setattr__(proxy, "_run", _run)
    object.__setattr__(proxy, "_arun", _arun)
    return proxy


def _settle(outcome: _Outcome, run_manager: Any) -> None:
    """Inside the tool's execution: mark it answered, raise the recorded failure."""
    if outcome.answered:
        _mark(run_manager)
    if outcome.error is not None:
        raise outcome.error


def _body_kwargs(
    func: Any, kwargs: dict[str, Any], run_manager: Any, config: Any
) -> dict[str, Any]:
    """What ``BaseTool.run`` would have passed the real body besides the arguments."""
    from langchain_core.tools.base import _get_runnable_config_param, _signature_parameters

    kwargs = dict(kwargs)
    if run_manager is not None and _signature_parameters(func).get("run_manager"):
        kwargs["run_manager"] = run_manager
    if config_param := _get_runnable_config_param(func):
        kwargs[config_param] = config
    return kwargs


def _arguments(tool: Any, tool_input: Any) -> dict[str, Any]:
    """The call's arguments as the tool sees them (injected arguments left out)."""
    if isinstance(tool_input, dict):
        try:
            return dict(tool._filter_injected_args(tool_input))
        except Exception:
            return dict(tool_input)
    schema = getattr(tool, "args_schema", None)
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict) and fields:
        return {next(iter(fields)): tool_input}
    return {"input": tool_input}


def _is_handoff(tool: Any) -> bool:
    """A tool declared to return a LangGraph ``Command`` (it routes the graph)."""
    for func in (getattr(tool, "func", None), getattr(tool, "coroutine", None)):
        if func is None:
            continue
        try:
            hint = typing.get_type_hints(func).get("return")
        except Exception:
            hint = inspect.signature(func).return_annotation
        for candidate in (hint, *typing.get_args(hint)):
            if isinstance(candidate, str):
                if candidate.split("[")[0].rpartition(".")[2] == "Command":
                    return True
            elif getattr(typing.get_origin(candidate) or candidate, "__qualname__", "") == (
                "Command"
            ) and "langgraph" in getattr(
                typing.get_origin(candidate) or candidate, "__module__", ""
            ):
                return True
    return False


def _mark(run_manager: Any) -> None:
    """``mark_replayed()`` with the tool's span current (the handler keeps LangChain's spans
    out of the OpenTelemetry context; found by run id)."""
    from opentelemetry import trace

    handler = _handler
    span = None if handler is None else handler.span(getattr(run_manager, "run_id", None))
    with trace.use_span(span or trace.INVALID_SPAN, end_on_exit=False):
        mark_replayed()


# ---------------------------------------------------------------------------------- tracing
#: the replay's span handler while a replay runs (``_replay_tracing``)
_handler: Any = None


def _manager_init(wrapped: Any, manager: Any, args: tuple, kwargs: dict) -> None:
    """``BaseCallbackManager.__init__``, then the replay's handler added (inherited by the
    managers of child runs; a copied manager has it already)."""
    wrapped(*args, **kwargs)
    handler = _handler
    if handler is not None and handler not in manager.inheritable_handlers:
        manager.add_handler(handler, True)


def _callback_manager() -> Any:
    from langchain_core.callbacks import BaseCallbackManager

    return BaseCallbackManager


_manager_patch = wrapt_patch(_callback_manager, "__init__", _manager_init)

#: LangChain instrumentors an agent's code may switch on: (module, class)
_INSTRUMENTORS = (
    ("openinference.instrumentation.langchain", "LangChainInstrumentor"),
    ("opentelemetry.instrumentation.langchain", "LangchainInstrumentor"),
)


def _traced_by_the_agent() -> bool:
    """Whether an instrumentation the agent's code switched on adds a handler of its own to
    every callback manager (OpenLIT's): a new, empty manager has one. Its spans
    record the replay's runs already; the replay's handler would record each one twice."""
    try:
        return bool(_callback_manager()(handlers=[]).inheritable_handlers)
    except Exception:
        return False
