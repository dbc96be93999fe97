"""CrewAI's runs as OpenTelemetry GenAI spans, for the replay of a crew or an agent.

While a replay runs, the CrewAI adapter patches (on their classes, put back after) the methods
every CrewAI run goes through, and each writes its span on the replay's ``TracerProvider``, on
the thread that runs it, as the converter reads GenAI:

- ``Crew.kickoff`` / ``akickoff``: ``invoke_workflow <crew name>``, the kickoff inputs as its
  question (the one text input, else the inputs as JSON), the output's ``raw`` its answer (a
  streaming kickoff runs the crew in a kickoff of its own, which is the one recorded);
- ``Task._execute_core`` / ``_aexecute_core``: ``invoke_agent <role>`` of the task's agent,
  the task output's ``raw`` its answer;
- ``Agent.kickoff`` / ``kickoff_async``: ``invoke_agent <role>``, the messages its question;
- an LLM call, from the LLM's call-started event to its call-completed or call-failed event
  (``BaseLLM._emit_call_*_event``, which every provider reports through, native or LiteLLM):
  ``chat <model>``, with the messages sent, the answer (text or tool calls), usage (from
  ``_track_token_usage_internal``, which each provider calls with the response's usage) and
  the response's dated model (from the provider's ``_extract_*token_usage(response)``). A
  call that runs its tool itself (``_handle_tool_execution``) ends its span before the tool
  runs: the tool is the agent's next step, not part of the model call;
- a tool execution: ``execute_tool <name>`` (``tool_span``, opened by the adapter's tool
  patch, so an answered call's span is the one marked replayed).

A failed run's span has status ERROR with the exception (``module.Class: message``).

Why not OpenInference's CrewAI and OpenAI instrumentors, which the recording may have used:
they flatten the crew, its agents and tasks and every request and response into attributes,
about 8 ms of CPU a three-call case, a third of what the replay adds to the agent's own time;
these spans are the ones a replay reads. They also need no instrumentation installed where the
agent runs.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from tracereplay.convert.values import dumps
from tracereplay.replay.frameworks.base import (
    SharedPatch,
    loaded_subclasses,
    qualified_name,
    wrapt_patch,
)
from tracereplay.sdk.messages import output_message, to_genai_messages
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_WORKFLOW_NAME,
)

__all__ = ["spans", "tool_span"]

_tracer: trace.Tracer | None = None
#: the object whose run span is open in this context (a kickoff that calls another of the
#: same object's kickoffs records one run)
_running: ContextVar[int | None] = ContextVar("tracereplay_crewai_running", default=None)
_in_tool: ContextVar[bool] = ContextVar("tracereplay_crewai_in_tool", default=False)
_chat: ContextVar[_Chat | None] = ContextVar("tracereplay_crewai_chat", default=None)


# ---------------------------------------------------------------------------------- spans
def _close(span: Span, error: BaseException | None = None) -> None:
    if error is not None:
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{qualified_name(type(error))}: {error}"))
    span.end()


def _raw(output: Any) -> str | None:
    """A kickoff's or a task's output as text (its ``raw``)."""
    if output is None:
        return None
    raw = getattr(output, "raw", output)
    return raw if isinstance(raw, str) else dumps(raw)


def _answered(span: Span, output: Any) -> None:
    text = _raw(output)
    if text is not None:
        span.set_attribute(GEN_AI_OUTPUT_MESSAGES, dumps([output_message(text)]))


def _run(name: str, attributes: dict[str, Any], owner: Any, call: Callable[[], Any]) -> Any:
    """``call()`` inside a run span made current; an awaitable it returns (a kickoff inside an
    event loop gives its coroutine) is awaited inside the span."""
    if _tracer is None or _running.get() == id(owner):
        return call()
    span = _tracer.start_span(name, attributes=attributes)
    token = _running.set(id(owner))
    try:
        with trace.use_span(span, end_on_exit=False, record_exception=False):
            output = call()
    except BaseException as exc:
        _close(span, exc)
        raise
    finally:
        _running.reset(token)
    if inspect.isawaitable(output):
        return _finished_later(span, owner, output)
    _answered(span, output)
    _close(span)
    return output


async def _finished_later(span: Span, owner: Any, awaitable: Any) -> Any:
    token = _running.set(id(owner))
    try:
        with trace.use_span(span, end_on_exit=False, record_exception=False):
            output = await awaitable
    except BaseException as exc:
        _close(span, exc)
        raise
    finally:
        _running.reset(token)
    _answered(span, output)
    _close(span)
    return output


def _question(inputs: Any) -> str | None:
    """A kickoff's inputs as its question: the one text input, else the inputs as JSON."""
    if not inputs:
        return None
    if isinstance(inputs, dict):
        texts = [v for v in inputs.values() if isinstance(v, str)]
        if len(inputs) == 1 and texts:
            return texts[0]
    return inputs if isinstance(inputs, str) else dumps(inputs)


def _asked(question: Any) -> dict[str, Any]:
    if question is None:
        return {}
    return {GEN_AI_INPUT_MESSAGES: dumps(to_genai_messages(question))}


# ---------------------------------------------------------------------------------- runs
def _crew_run(wrapped: Callable[..., Any], crew: Any, args: tuple, kwargs: dict) -> Any:
    if getattr(crew, "stream", False):  # the kickoff it starts on its thread is the run
        return wrapped(*args, **kwargs)
    name = str(getattr(crew, "name", None) or "crew")
    inputs = kwargs.get("inputs", args[0] if args else None)
    attributes = {
        GEN_AI_OPERATION_NAME: "invoke_workflow",
        GEN_AI_WORKFLOW_NAME: name,
        **_asked(_question(inputs)),
    }
    return _run(f"invoke_workflow {name}", attributes, crew, lambda: wrapped(*args, **kwargs))


def _agent_attributes(agent: Any) -> tuple[str, dict[str, Any]]:
    role = str(getattr(agent, "role", None) or "agent")
    return role, {GEN_AI_OPERATION_NAME: "invoke_agent", GEN_AI_AGENT_NAME: role}


def _task_run(wrapped: Callable[..., Any], task: Any, args: tuple, kwargs: dict) -> Any:
    agent = (args[0] if args else kwargs.get("agent")) or getattr(task, "agent", None)
    role, attributes = _agent_attributes(agent)
    return _run(f"invoke_agent {role}", attributes, task, lambda: wrapped(*args, **kwargs))


def _agent_run(wrapped: Callable[..., Any], agent: Any, args: tuple, kwargs: dict) -> Any:
    role, attributes = _agent_attributes(agent)
    attributes.update(_asked(kwargs.get("messages", args[0] if args else None)))
    return _run(f"invoke_agent {role}", attributes, agent, lambda: wrapped(*args, **kwargs))


# ---------------------------------------------------------------------------------- LLM calls
class _Chat:
    """One LLM call's open span (ended once: a call that ran its tool ends it early)."""

    __slots__ = ("open", "span")

    def __init__(self, span: Span) -> None:
        self.span, self.open = span, True

    def has(self, key: str) -> bool:
        return (getattr(self.span, "attributes", None) or {}).get(key) is not None

    def end(self, attributes: dict[str, Any], error: str | None = None) -> None:
        if not self.open:
            return
        self.open = False
        # what the call's start or its usage set stays (the messages before the provider's
        # own formatting, the usage the provider read)
        for key, value in attributes.items():
            if value is not None and not self.has(key):
                self.span.set_attribute(key, value)
        if error is not None:
            self.span.set_status(Status(StatusCode.ERROR, error))
        self.span.end()


def _openai_messages(messages: Any) -> Any:
    """Messages as sent (CrewAI keeps them as OpenAI-style dicts, a string for a prompt)."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [m.model_dump() if hasattr(m, "model_dump") else m for m in messages or ()]


def _llm_started(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    result = wrapped(*args, **kwargs)
    if _tracer is not None:
        model = str(getattr(llm, "model", "") or "")
        messages = kwargs.get("messages", args[0] if args else None)
        attributes = {
            GEN_AI_OPERATION_NAME: "chat",
            GEN_AI_REQUEST_MODEL: model,
            GEN_AI_PROVIDER_NAME: str(getattr(llm, "provider", "") or "") or None,
            GEN_AI_INPUT_MESSAGES: dumps(to_genai_messages(_openai_messages(messages))),
        }
        span = _tracer.start_span(
            f"chat {model}".strip(), attributes={k: v for k, v in attributes.items() if v}
        )
        _chat.set(_Chat(span))
    return result


def _tool_calls(response: Any) -> list[Any] | None:
    """A response that asks for tools (a list of the provider's tool calls), as
    ``{"id", "name", "arguments"}`` or OpenAI tool calls; ``None`` for text."""
    if not isinstance(response, list) or not response:
        return None
    calls = []
    for call in response:
        if hasattr(call, "model_dump"):
            call = call.model_dump()
        if not isinstance(call, dict):
            return None
        if "function" not in call and "input" in call:  # Anthropic's tool_use
            call = {"id": call.get("id"), "name": call.get("name"), "arguments": call["input"]}
        elif "function" not in call and "args" in call:  # Gemini's function call
            call = {"id": call.get("id"), "name": call.get("name"), "arguments": call["args"]}
        calls.append(call)
    return calls


_INPUT_TOKENS = ("prompt_tokens", "input_tokens", "inputTokens")
_OUTPUT_TOKENS = ("completion_tokens", "output_tokens", "outputTokens")


def _usage(usage: Any) -> dict[str, Any]:
    """Token counts of a provider's usage (a dict, or LiteLLM's ``Usage`` object)."""
    if usage is None:
        return {}
    if not isinstance(usage, dict):
        usage = {k: getattr(usage, k, None) for k in (*_INPUT_TOKENS, *_OUTPUT_TOKENS)}
    ins = next((usage[k] for k in _INPUT_TOKENS if usage.get(k) is not None), None)
    outs = next((usage[k] for k in _OUTPUT_TOKENS if usage.get(k) is not None), None)
    return {GEN_AI_USAGE_INPUT_TOKENS: ins, GEN_AI_USAGE_OUTPUT_TOKENS: outs}


def _taken_chat() -> _Chat | None:
    """The open LLM call's span, no longer the context's (its end event is being handled)."""
    chat = _chat.get()
    if chat is not None:
        _chat.set(None)
    return chat


def _llm_completed(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    chat = _taken_chat()
    if chat is not None:
        response = kwargs.get("response", args[0] if args else None)
        finish = kwargs.get("finish_reason")
        calls = _tool_calls(response)
        content = None if calls else response
        if content is not None and not isinstance(content, str):
            content = dumps(content)
        attributes = {
            GEN_AI_OUTPUT_MESSAGES: dumps([output_message(content, calls, finish)]),
            GEN_AI_RESPONSE_FINISH_REASONS: (finish,) if finish else None,
            **_usage(kwargs.get("usage")),
        }
        sent = kwargs.get("messages")
        if sent and not chat.has(GEN_AI_INPUT_MESSAGES):  # the start had none
            attributes[GEN_AI_INPUT_MESSAGES] = dumps(to_genai_messages(_openai_messages(sent)))
        chat.end(attributes)
    return wrapped(*args, **kwargs)


def _llm_failed(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    chat = _taken_chat()
    if chat is not None:
        chat.end({}, str(kwargs.get("error", args[0] if args else "")))
    return wrapped(*args, **kwargs)


def _llm_usage(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    chat = _chat.get()
    if chat is not None and chat.open:
        for key, value in _usage(args[0] if args else kwargs.get("usage_data")).items():
            if value is not None:
                chat.span.set_attribute(key, value)
    return wrapped(*args, **kwargs)


def _llm_runs_tool(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    """The model asked for a tool that the LLM call runs itself: its span ends here."""
    chat = _taken_chat()
    if chat is not None:
        name = kwargs.get("function_name", args[0] if args else "")
        arguments = kwargs.get("function_args", args[1] if len(args) > 1 else {})
        call = {"name": name, "arguments": arguments}
        chat.end(
            {
                GEN_AI_OUTPUT_MESSAGES: dumps([output_message(None, [call], "tool_calls")]),
                GEN_AI_RESPONSE_FINISH_REASONS: ("tool_calls",),
            }
        )
    return wrapped(*args, **kwargs)


def _response_model(wrapped: Callable[..., Any], llm: Any, args: tuple, kwargs: dict) -> Any:
    """A provider's ``_extract_*token_usage(response)``: the response's own (dated) model."""
    chat = _chat.get()
    if chat is not None and chat.open and args:
        model = getattr(args[-1], "model", None) or getattr(args[-1], "model_version", None)
        if isinstance(model, str) and model:
            chat.span.set_attribute(GEN_AI_RESPONSE_MODEL, model)
    return wrapped(*args, **kwargs)


# ---------------------------------------------------------------------------------- tools
@contextlib.contextmanager
def tool_span(name: str, arguments: Any) -> Iterator[Callable[[Any], None]]:
    """An ``execute_tool <name>`` span made current around one tool execution (none while the
    replay's spans are off, or inside another tool's); yields the setter of its result."""
    if _tracer is None or _in_tool.get():
        yield lambda result: None
        return
    attributes = {
        GEN_AI_OPERATION_NAME: "execute_tool",
        GEN_AI_TOOL_NAME: name,
        GEN_AI_TOOL_CALL_ARGUMENTS: dumps(arguments),
    }
    span = _tracer.start_span(f"execute_tool {name}", attributes=attributes)
    token = _in_tool.set(True)

    def result(value: Any) -> None:
        if value is not None:
            span.set_attribute(GEN_AI_TOOL_CALL_RESULT, _raw(value) or "")

    try:
        with trace.use_span(span, end_on_exit=False, record_exception=False):
            yield result
    except BaseException as exc:
        _close(span, exc)
        raise
    finally:
        _in_tool.reset(token)
    _close(span)


# ---------------------------------------------------------------------------------- patches
#: (module, class, method, wrapper): each wrapped on its class while the spans are on
_PATCHES: tuple[tuple[str, str, str, Callable[..., Any]], ...] = (
    ("crewai.crew", "Crew", "kickoff", _crew_run),
    ("crewai.crew", "Crew", "akickoff", _crew_run),
    ("crewai.task", "Task", "_execute_core", _task_run),
    ("crewai.task", "Task", "_aexecute_core", _task_run),
    ("crewai.agent.core", "Agent", "kickoff", _agent_run),
    ("crewai.agent.core", "Agent", "kickoff_async", _agent_run),
    ("crewai.llms.base_llm", "BaseLLM", "_emit_call_started_event", _llm_started),
    ("crewai.llms.base_llm", "BaseLLM", "_emit_call_completed_event", _llm_completed),
    ("crewai.llms.base_llm", "BaseLLM", "_emit_call_failed_event", _llm_failed),
    ("crewai.llms.base_llm", "BaseLLM", "_handle_tool_execution", _llm_runs_tool),
)
#: the patches in place (``wrapt_patch`` each), closed by ``_uninstall``
_held: list[contextlib.ExitStack] = []


def _async_aware(wrapper: Callable[..., Any], original: Any) -> Callable[..., Any]:
    """``wrapper`` for an async method: the span opens when the coroutine runs."""
    if not inspect.iscoroutinefunction(original):
        return wrapper

    async def run(wrapped: Callable[..., Any], instance: Any, args: tuple, kwargs: dict) -> Any:
        async def call(*a: Any, **k: Any) -> Any:
            return await wrapped(*a, **k)

        return await wrapper(call, instance, args, kwargs)

    return run


def _install(tracer_provider: Any) -> None:
    global _tracer
    stack = contextlib.ExitStack()

    def wrap(cls: type, method: str, wrapper: Callable[..., Any]) -> None:
        original = cls.__dict__.get(method)
        if original is None:
            return
        wrapper = _async_aware(wrapper, getattr(original, "__func__", original))
        stack.enter_context(wrapt_patch(lambda: cls, method, wrapper).held())

    for module, cls_name, method, wrapper in _PATCHES:
        try:
            cls = getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError):
            continue
        wrap(cls, method, wrapper)
    base = _base_llm()
    if base is not None:
        # usage and the response's model: what each provider (loaded by now) reads of it
        for cls in (base, *loaded_subclasses(base)):
            wrap(cls, "_track_token_usage_internal", _llm_usage)
            for method in list(vars(cls)):
                if method.startswith("_extract_") and method.endswith("token_usage"):
                    wrap(cls, method, _response_model)
    _held.append(stack)
    _tracer = tracer_provider.get_tracer("tracereplay.crewai")


def _base_llm() -> type | None:
    try:
        return importlib.import_module("crewai.llms.base_llm").BaseLLM
    except (ImportError, AttributeError):
        return None


def _uninstall() -> None:
    global _tracer
    _tracer = None
    _held.pop().close()


_patch = SharedPatch(_install, _uninstall)


def spans(tracer_provider: Any) -> contextlib.AbstractContextManager[None]:
    """The replay's CrewAI spans on ``tracer_provider`` while the context is held."""
    return _patch.held(tracer_provider)
