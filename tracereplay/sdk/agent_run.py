"""``agent_run``: one agent run as a GenAI ``invoke_agent`` span (context manager or decorator).

with tracereplay.agent_run("weather_agent", query, context=docs) as run:
    with run.llm_call(model="gpt-4o-mini", messages=messages) as llm:
        llm.set_openai_response(client.chat.completions.create(...))
    ...
    run.set_response(answer)

@tracereplay.agent_run("weather_agent")
def answer(query: str) -> str: ...   # the return value is the response
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any, TypeVar, cast

from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue

from tracereplay.sdk import attributes as A
from tracereplay.sdk.content import ContentPolicy, current_policy
from tracereplay.sdk.health import guard
from tracereplay.sdk.llm_call import LlmCall
from tracereplay.sdk.messages import text_part
from tracereplay.sdk.replay_hook import current_run_attributes
from tracereplay.sdk.span_scope import SpanScope, SyncAsyncContext, mark_error

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

_current_run: ContextVar[AgentRunHandle | None] = ContextVar("tracereplay_run", default=None)


def current_run() -> AgentRunHandle | None:
    """The innermost agent run active in this thread or task, if any."""
    return _current_run.get()


def normalize_context(context: Any) -> list[dict[str, str]]:
    """Context documents as ``[{"name", "content"}]``.

    A string is one document named ``context``; a list holds strings (named ``document_1``...),
    ``{"name", "content"}`` dicts or ``Document`` models; any other dict maps names to contents.
    """
    if context is None:
        return []
    if isinstance(context, str):
        return [{"name": "context", "content": context}]
    dump = getattr(context, "model_dump", None)
    if callable(dump):
        context = dump()
    if isinstance(context, Mapping):
        if "content" in context and set(context) <= {"name", "content"}:
            return [
                {"name": str(context.get("name", "context")), "content": str(context["content"])}
            ]
        return [{"name": str(k), "content": str(v)} for k, v in context.items()]
    docs = []
    for i, item in enumerate(cast(Iterable[Any], context), start=1):
        dump = getattr(item, "model_dump", None)
        if callable(dump):
            item = dump()
        if isinstance(item, Mapping):
            docs.append(
                {
                    "name": str(item.get("name", f"document_{i}")),
                    "content": str(item.get("content", "")),
                }
            )
        else:
            docs.append({"name": f"document_{i}", "content": str(item)})
    return docs


class AgentRunHandle:
    """The run being recorded: set its response, record its LLM calls, mark how it ended."""

    __slots__ = ("agent_name", "query", "_scope", "_policy", "_pending", "_lock")

    def __init__(self, agent_name: str, query: str | None, scope: SpanScope, policy: ContentPolicy):
        self.agent_name = agent_name
        self.query = query
        self._scope = scope
        self._policy = policy
        self._pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # tools of one run may run in several threads

    @property
    def trace_id(self) -> str:
        """The run's trace id (32 hex digits); ``tracereplay show`` accepts it."""
        return format(self._scope.span.get_span_context().trace_id, "032x")

    @property
    def span_id(self) -> str:
        """The ``invoke_agent`` span's id (16 hex digits)."""
        return format(self._scope.span.get_span_context().span_id, "016x")

    @property
    def run_id(self) -> str:
        """The id this run will have in the store (``tracereplay show RUN_ID``)."""
        from tracereplay.convert import run_id_for  # only when asked: keeps the SDK light

        return run_id_for(self.trace_id, self.span_id)

    def set_response(self, response: Any) -> None:
        """The agent's final answer (text; anything else is recorded as JSON)."""
        if not self._policy.capture:
            return
        with guard("run response"):
            text = response if isinstance(response, str) else self._policy.json(response)
            message = {"role": "assistant", "parts": [text_part(text)], "finish_reason": "stop"}
            self._scope.span.set_attribute(A.OUTPUT_MESSAGES, self._policy.json([message]))

    def mark_max_rounds_exceeded(self) -> None:
        """The agent stopped because it hit its round limit with tools still requested."""
        with guard("run status"):
            self._scope.span.set_attribute(A.RUN_STATUS, A.STATUS_MAX_ROUNDS_EXCEEDED)

    def set_error(self, message: str, error_type: str = "AgentError") -> None:
        """The run failed without an exception reaching ``agent_run`` (the agent caught it)."""
        with guard("run error"):
            mark_error(self._scope.span, error_type, message, self._policy)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        with guard("run attribute"):
            self._scope.span.set_attribute(key, value)

    def llm_call(
        self,
        model: str,
        messages: Any = None,
        *,
        provider: str | None = None,
        tools: Any = None,
        system_instructions: str | None = None,
        attributes: Mapping[str, AttributeValue] | None = None,
    ) -> LlmCall:
        """A ``chat`` span around one LLM call; ``with run.llm_call(...) as llm:``.

        ``messages`` are OpenAI-style or GenAI-shaped. Tool calls the model answers with are
        remembered, so the matching ``@tool`` calls get their call ids.
        """
        return LlmCall(
            model,
            messages,
            provider=provider,
            tools=tools,
            system_instructions=system_instructions,
            attributes=attributes,
            on_tool_calls=self._add_tool_calls,
        )

    def _add_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        with self._lock:
            self._pending.extend(calls)

    def take_tool_call_id(self, tool_name: str, arguments: Mapping[str, Any]) -> str | None:
        """The id of the model's pending call of ``tool_name`` (same arguments first), consumed."""
        with self._lock:
            best = None
            for i, call in enumerate(self._pending):
                if call.get("name") != tool_name:
                    continue
                if call.get("arguments") == arguments:
                    best = i
                    break
                if best is None:
                    best = i
            if best is None:
                return None
            call_id = self._pending.pop(best).get("id")
        return str(call_id) if call_id else None


class AgentRun(SyncAsyncContext[AgentRunHandle]):
    """What ``agent_run(...)`` returns: a context manager (sync and async) and a decorator."""

    def __init__(
        self,
        agent_name: str,
        query: str | None = None,
        context: Any = None,
        parameters: Mapping[str, Any] | None = None,
        attributes: Mapping[str, AttributeValue] | None = None,
        session_id: str | None = None,
    ) -> None:
        self.agent_name = agent_name
        self.query = query
        self.context = context
        self.parameters = parameters
        self.attributes = attributes
        self.session_id = session_id
        self._active: list[tuple[AgentRunHandle, object]] = []

    # ------------------------------------------------------------------ context manager
    def _start(self) -> tuple[AgentRunHandle, object]:
        query, context, parameters = self.query, self.context, self.parameters
        policy = current_policy()
        attrs: dict[str, AttributeValue] = {
            A.OPERATION_NAME: A.OP_INVOKE_AGENT,
            A.AGENT_NAME: self.agent_name,
        }
        with guard("run attributes"):
            if policy.capture and query is not None:
                text = query if isinstance(query, str) else policy.json(query)
                attrs[A.INPUT_MESSAGES] = policy.json(
                    [{"role": "user", "parts": [text_part(text)]}]
                )
            docs = normalize_context(context)
            if docs and policy.capture:
                attrs[A.RUN_CONTEXT] = policy.json(docs)
            if parameters:
                attrs[A.RUN_PARAMETERS] = policy.json(dict(parameters))
            if self.session_id is not None and str(self.session_id):
                attrs[A.CONVERSATION_ID] = str(self.session_id)
            extra = current_run_attributes()
            if extra:
                attrs.update(extra)
            if self.attributes:
                attrs.update(self.attributes)
        scope = SpanScope(f"{A.OP_INVOKE_AGENT} {self.agent_name}", SpanKind.INTERNAL, attrs)
        handle = AgentRunHandle(
            self.agent_name, query if isinstance(query, str) else None, scope, policy
        )
        return handle, _current_run.set(handle)

    def __enter__(self) -> AgentRunHandle:
        handle, token = self._start()
        self._active.append((handle, token))
        return handle

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        handle, token = self._active.pop()
        with guard("run context"):
            _current_run.reset(token)  # type: ignore[arg-type]
        handle._scope.close(exc, handle._policy)

    # ------------------------------------------------------------------ decorator
    def __call__(self, fn: F) -> F:
        sig = inspect.signature(fn)

        def run_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> AgentRun:
            """This run for one call: inputs not given default to the call's arguments."""
            query, context, parameters = self.query, self.context, self.parameters
            session_id = self.session_id
            with guard("run inputs"):
                bound = sig.bind_partial(*args, **kwargs).arguments
                names = [n for n in bound if n not in ("self", "cls")]
                if query is None:
                    query = bound.get("query", bound[names[0]] if names else None)
                if context is None:
                    context = bound.get("context")
                if parameters is None and isinstance(bound.get("parameters"), Mapping):
                    parameters = bound["parameters"]
                if session_id is None and isinstance(bound.get("session_id"), (str, int)):
                    session_id = str(bound["session_id"])
            return AgentRun(
                self.agent_name, query, context, parameters, self.attributes, session_id
            )

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with run_of(args, kwargs) as handle:
                    return _record_return(handle, await fn(*args, **kwargs))

            return cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with run_of(args, kwargs) as handle:
                return _record_return(handle, fn(*args, **kwargs))

        return cast(F, wrapper)


def _record_return(handle: AgentRunHandle, result: R) -> R:
    """The decorated function's return value is the response; an ``AgentResult``-like object
    (with ``response`` and ``status``) also gives the run's status. Returns ``result``."""
    with guard("run result"):
        if result is None:
            return result  # the function may have called current_run().set_response() itself
        response = getattr(result, "response", None)
        if isinstance(response, str) and not isinstance(result, str):
            handle.set_response(response)
            status = getattr(result, "status", None)
            if status == A.STATUS_MAX_ROUNDS_EXCEEDED:
                handle.mark_max_rounds_exceeded()
            elif status == "failed":
                handle.set_error("the agent returned status 'failed'", "AgentFailed")
        else:
            handle.set_response(result)
    return result


def agent_run(
    agent_name: str,
    query: str | None = None,
    context: Any = None,
    parameters: Mapping[str, Any] | None = None,
    *,
    attributes: Mapping[str, AttributeValue] | None = None,
    session_id: str | None = None,
) -> AgentRun:
    """Record one agent run as an ``invoke_agent`` span.

    As a context manager (``with`` / ``async with``) it yields an ``AgentRunHandle``; as a
    decorator (sync or async) the function's return value is the response, and ``query``,
    ``context`` and ``parameters`` default to the function's arguments of those names (the
    query to its first argument). ``context`` (documents) and ``parameters`` (a JSON object) are
    recorded so a promoted case reproduces the run's input. An exception is recorded on the
    span, then re-raised. ``attributes`` are extra span attributes (replay sets
    ``tracereplay.run.kind``, ``tracereplay.eval_run_id``, ``tracereplay.case_id``).
    ``session_id`` names the conversation the run is a turn of (``gen_ai.conversation.id``;
    ``tracereplay runs --session ID`` lists its turns); a decorated function's ``session_id``
    argument gives it when this is not set.
    """
    return AgentRun(agent_name, query, context, parameters, attributes, session_id)
