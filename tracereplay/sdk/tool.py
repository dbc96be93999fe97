"""``@tracereplay.tool``: every tool call as a GenAI ``execute_tool`` span, and the replay hook.

Each call records the tool name, its call id, its arguments (bound by the signature), its result
or error, and its duration. Before running the tool it asks the active ``tool_interceptor``
(``tracereplay.sdk.replay_hook``), so replay can answer the call from a recording: this is the one
place every tool call goes through.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast, overload

from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue

from tracereplay.sdk import attributes as A
from tracereplay.sdk.agent_run import current_run
from tracereplay.sdk.content import ContentPolicy, current_policy
from tracereplay.sdk.health import health
from tracereplay.sdk.replay_hook import RUN_LIVE, _interceptor
from tracereplay.sdk.span_scope import SpanScope

F = TypeVar("F", bound=Callable[..., Any])


class _Binder:
    """Maps a call's ``args``/``kwargs`` to ``{parameter: value}`` (fast path for plain signatures)."""

    __slots__ = ("sig", "positional", "skip_first", "simple", "var_keyword")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.sig = inspect.signature(fn)
        params = list(self.sig.parameters.values())
        self.skip_first = bool(params) and params[0].name in ("self", "cls")
        P = inspect.Parameter
        self.positional = [
            p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
        ]
        self.simple = not any(p.kind is P.VAR_POSITIONAL for p in params)
        self.var_keyword = next((p.name for p in params if p.kind is P.VAR_KEYWORD), None)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.simple and len(args) <= len(self.positional):
            bound = dict(zip(self.positional, args))
            bound.update(kwargs)
        else:
            try:
                arguments = self.sig.bind_partial(*args, **kwargs).arguments
            except TypeError:  # a bad call: the tool itself will raise; record what was passed
                return {"args": list(args), **kwargs}
            bound = dict(arguments)
            if self.var_keyword and self.var_keyword in bound:
                bound.update(bound.pop(self.var_keyword))
        if self.skip_first and self.positional and args:
            bound.pop(self.positional[0], None)
        return bound


class ToolSpec:
    """A decorated tool's name, description and how its calls are bound."""

    __slots__ = ("name", "description", "binder")

    def __init__(self, fn: Callable[..., Any], name: str | None, description: str | None) -> None:
        self.name = name or getattr(fn, "__name__", "tool")
        doc = inspect.getdoc(fn) or ""
        self.description = description if description is not None else doc.split("\n", 1)[0]
        self.binder = _Binder(fn)

    def start(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], call_id: str | None
    ) -> tuple[SpanScope, ContentPolicy, dict[str, Any]]:
        policy = current_policy()
        arguments: dict[str, Any] = {}
        attrs: dict[str, AttributeValue] = {
            A.OPERATION_NAME: A.OP_EXECUTE_TOOL,
            A.TOOL_NAME: self.name,
            A.TOOL_TYPE: "function",
        }
        try:  # not ``guard``: this runs for every tool call
            arguments = self.binder.bind(args, kwargs)
            if self.description:
                attrs[A.TOOL_DESCRIPTION] = self.description
            if call_id is None:
                run = current_run()
                if run is not None:
                    call_id = run.take_tool_call_id(self.name, arguments)
            if call_id:
                attrs[A.TOOL_CALL_ID] = call_id
            if policy.capture:
                attrs[A.TOOL_CALL_ARGUMENTS] = policy.json(arguments)
        except Exception as exc:
            health.instrumentation_failed("tool arguments", exc)
        scope = SpanScope(f"{A.OP_EXECUTE_TOOL} {self.name}", SpanKind.INTERNAL, attrs)
        return scope, policy, arguments

    @staticmethod
    def finish(scope: SpanScope, policy: ContentPolicy, result: Any, replayed: bool) -> None:
        try:
            span = scope.span
            if replayed:
                span.set_attribute(A.TOOL_REPLAYED, True)
            if policy.capture:
                span.set_attributes(
                    {
                        A.TOOL_CALL_RESULT: policy.value(result),
                        A.TOOL_RESULT_ENCODING: "text" if isinstance(result, str) else "json",
                    }
                )
        except Exception as exc:
            health.instrumentation_failed("tool result", exc)
        scope.close(None, policy)


def _intercept(spec: ToolSpec, arguments: dict[str, Any]) -> Any:
    interceptor = _interceptor.get()
    if interceptor is None:
        return RUN_LIVE
    return interceptor(spec.name, arguments)


def _mark_answered(scope: SpanScope) -> None:
    """The interceptor answered the call by raising: the span says it was replayed."""
    try:
        scope.span.set_attribute(A.TOOL_REPLAYED, True)
    except Exception as exc:
        health.instrumentation_failed("tool replayed", exc)


def _wrap_sync(fn: Callable[..., Any], spec: ToolSpec) -> Callable[..., Any]:
    def invoke(call_id: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        scope, policy, arguments = spec.start(args, kwargs, call_id)
        try:
            try:
                outcome = _intercept(spec, arguments)
            except BaseException:
                _mark_answered(scope)  # a recorded failure: the tool did not run
                raise
            replayed = outcome is not RUN_LIVE
            result = outcome if replayed else fn(*args, **kwargs)
        except BaseException as exc:
            scope.close(exc, policy)
            raise
        spec.finish(scope, policy, result, replayed)
        return result

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return invoke(None, args, kwargs)

    def with_call_id(call_id: str) -> Callable[..., Any]:
        """This tool, recording ``call_id`` (the model's tool-call id) on its span."""
        return lambda *args, **kwargs: invoke(call_id, args, kwargs)

    wrapper.with_call_id = with_call_id  # type: ignore[attr-defined]
    wrapper.tool_name = spec.name  # type: ignore[attr-defined]
    return wrapper


def _wrap_async(fn: Callable[..., Awaitable[Any]], spec: ToolSpec) -> Callable[..., Any]:
    async def invoke(call_id: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        scope, policy, arguments = spec.start(args, kwargs, call_id)
        try:
            try:
                outcome = _intercept(spec, arguments)
                replayed = outcome is not RUN_LIVE
                if replayed and inspect.isawaitable(outcome):
                    outcome = await outcome
                    replayed = outcome is not RUN_LIVE
            except BaseException:
                _mark_answered(scope)  # a recorded failure: the tool did not run
                raise
            result = outcome if replayed else await fn(*args, **kwargs)
        except BaseException as exc:
            scope.close(exc, policy)
            raise
        spec.finish(scope, policy, result, replayed)
        return result

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return await invoke(None, args, kwargs)

    def with_call_id(call_id: str) -> Callable[..., Awaitable[Any]]:
        """This tool, recording ``call_id`` (the model's tool-call id) on its span."""
        return lambda *args, **kwargs: invoke(call_id, args, kwargs)

    wrapper.with_call_id = with_call_id  # type: ignore[attr-defined]
    wrapper.tool_name = spec.name  # type: ignore[attr-defined]
    return wrapper


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    fn: None = None, /, *, name: str | None = None, description: str | None = None
) -> Callable[[F], F]: ...
def tool(
    fn: F | None = None, /, *, name: str | None = None, description: str | None = None
) -> F | Callable[[F], F]:
    """Record each call of a tool (sync or async) as an ``execute_tool`` span.

    ``@tool``, ``@tool()`` or ``@tool(name="get_weather", description=...)``; the description
    defaults to the docstring's first line. The call id is the model's id for this call when the
    run's ``llm_call`` recorded it (matched by name, then arguments), or given explicitly:
    ``get_weather.with_call_id("call_1")(city="Paris")``. Active ``tool_interceptor``s answer
    calls first (replay); an exception is recorded on the span, then re-raised.
    """

    def decorate(func: F) -> F:
        spec = ToolSpec(func, name, description)
        if inspect.iscoroutinefunction(func):
            return cast(F, _wrap_async(func, spec))
        return cast(F, _wrap_sync(func, spec))

    return decorate(fn) if fn is not None else decorate
