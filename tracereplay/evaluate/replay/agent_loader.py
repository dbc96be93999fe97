"""Loading the agent to replay (``module:callable``) and calling it the way the suite expects.

``module:attr`` names a callable or a framework's own agent object (a ``pydantic_ai.Agent``, an
OpenAI Agents SDK ``Agent``, a compiled LangGraph graph, a strands ``Agent``, a Google ADK
agent, a LlamaIndex workflow agent or ``AgentWorkflow``, a smolagents agent): an object a
framework adapter accepts (``tracereplay.evaluate.replay.frameworks``) is run the way its
framework runs it, on the case's query, its tools intercepted there. Adapters are asked before
the AgenticAssure shape below: LlamaIndex and smolagents agents have a ``run`` method too. The callable is called as ``fn(query, context=documents, parameters=params)``; a keyword it does
not declare is left out (``**kwargs`` takes both), so ``fn(query)`` is enough for a simple agent.
It may be ``async``, and returns the response text or an ``AgentResult``.

An AgenticAssure adapter is accepted as it is: a class (instantiated without arguments, as
``agenticassure run --adapter`` does) or an object with ``run(input, context=None)`` returning an
AgenticAssure ``AgentResult`` (``output``, ``tool_calls`` of ``name``/``arguments``/``result``);
``from_agenticassure`` maps that onto tracereplay's ``AgentResult`` field by field. A ``run``
method of another signature (``run(task, *, context)``, ``run(self)``...) makes no adapter
(``is_adapter_run``): such an object, like any object neither callable nor a supported
framework's agent, is refused with one line saying what ``--agent`` accepts.

A plain callable's tools, when they are plain functions of its module, are answered from the
recording by the no-framework fallback (``plain_tools``, the ``plain`` field).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tracereplay.errors import TraceReplayError, one_line
from tracereplay.evaluate.replay.frameworks import (
    FrameworkAgent,
    framework_agent,
    supported_frameworks,
)
from tracereplay.evaluate.replay.plain_tools import PlainTools, agent_modules
from tracereplay.models import AgentResult, Document, ToolCallRecord


class AgentLoadError(TraceReplayError):
    """``--agent`` names nothing callable, or its module fails to import."""


class AgentResultError(Exception):
    """The agent returned something that is neither a string nor an ``AgentResult``."""


@dataclass(frozen=True)
class AgentCallable:
    """A loaded agent: the function plus which optional keywords it takes."""

    spec: str
    fn: Callable[..., Any]
    is_async: bool
    takes_context: bool
    takes_parameters: bool
    #: the framework adapter when ``spec`` names a framework's agent object (``fn`` is its arun)
    framework: FrameworkAgent | None = None
    #: no framework: the plain tool functions of the agent's module (answered by name)
    plain: PlainTools | None = None

    @property
    def name(self) -> str:
        """The callable's name (``module:callable`` minus the module)."""
        return self.spec.rpartition(":")[2]

    def kwargs(
        self, documents: Sequence[Document], parameters: Mapping[str, str]
    ) -> dict[str, Any]:
        """The keyword arguments this callable gets for one case."""
        kwargs: dict[str, Any] = {}
        if self.takes_context:
            kwargs["context"] = list(documents)
        if self.takes_parameters:
            kwargs["parameters"] = dict(parameters)
        return kwargs

    def call_sync(
        self, query: str, documents: Sequence[Document], parameters: Mapping[str, str]
    ) -> Any:
        """Call a sync agent (an async one is run to completion on a fresh event loop)."""
        out = self.fn(query, **self.kwargs(documents, parameters))
        if inspect.isawaitable(out):
            return asyncio.run(_await(out))
        return out

    async def call_async(
        self, query: str, documents: Sequence[Document], parameters: Mapping[str, str]
    ) -> Any:
        """Call the agent from a coroutine (a sync agent runs right here, blocking the loop)."""
        out = self.fn(query, **self.kwargs(documents, parameters))
        if inspect.isawaitable(out):
            out = await out
        return out


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def load_agent(spec: str) -> AgentCallable:
    """Import ``module:callable`` (dotted attributes allowed after the colon) from the current
    directory or ``PYTHONPATH``; one-line ``AgentLoadError`` when that is impossible."""
    module_name, sep, attr_path = spec.strip().partition(":")
    if not sep or not module_name or not attr_path:
        raise AgentLoadError(
            f"--agent '{spec}' must look like module:callable (e.g. my_agent:run_agent)"
        )
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise AgentLoadError(
                f"--agent '{spec}': no module named '{module_name}' in the current directory "
                "or on PYTHONPATH"
            ) from None
        raise AgentLoadError(
            f"--agent '{spec}': importing {module_name} failed: {one_line(exc)}"
        ) from None
    except Exception as exc:  # the user's module raised while importing
        raise AgentLoadError(
            f"--agent '{spec}': importing {module_name} failed: "
            f"{type(exc).__name__}: {one_line(exc)}"
        ) from None
    target: Any = module
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AgentLoadError(f"--agent '{spec}': {module_name} has no '{attr_path}'") from None
    if inspect.isclass(target) and is_adapter_run(getattr(target, "run", None), unbound=True):
        try:
            target = target()  # an AgenticAssure adapter class: built as `agenticassure run` does
        except Exception as exc:
            raise AgentLoadError(
                f"--agent '{spec}': {attr_path}() failed: {type(exc).__name__}: {one_line(exc)}"
            ) from None
    if not inspect.isroutine(target) and not inspect.isclass(target):
        adapter = framework_agent(target, spec)
        if adapter is not None:
            return AgentCallable(spec, adapter.arun, True, False, False, framework=adapter)
        if is_adapter_run(getattr(target, "run", None)):
            return _with_plain(adapter_agent(spec, target), module, target)
    if not callable(target) or (inspect.isclass(target) and callable(getattr(target, "run", None))):
        raise AgentLoadError(refusal(spec, attr_path, target))
    return _with_plain(inspect_agent(spec, target), module, target)


def refusal(spec: str, attr_path: str, target: Any) -> str:
    """The one line for an object ``--agent`` cannot run: what it is, and what is accepted."""
    what = "class" if inspect.isclass(target) else type(target).__name__
    has_run = callable(getattr(target, "run", None))
    return (
        f"--agent '{spec}': {attr_path} is a {what}"
        + (
            " whose run() is not an AgenticAssure adapter's run(input, context=None)"
            if has_run
            else ""
        )
        + ", not a callable nor an agent of a supported framework; --agent takes a function "
        "fn(query) (async too), an agent object of "
        + ", ".join(supported_frameworks())
        + ", or an AgenticAssure adapter; for a loop of your own, point it at the function "
        "that answers a query and mark its tools @tracereplay.tool when they are not plain "
        "functions of its module (docs/evaluating.md)"
    )


def is_adapter_run(run: Any, *, unbound: bool = False) -> bool:
    """Whether ``run`` has an AgenticAssure adapter's signature, ``run(input, context=None)``:
    the input as its first positional parameter, then a ``context`` parameter that takes a
    keyword (optional, or positional-or-keyword), nothing else required. A ``**kwargs`` alone
    is no ``context`` (frameworks' ``run(messages, **kwargs)``). ``unbound``: a class's
    function (``self`` first)."""
    if not callable(run):
        return False
    try:
        params = list(inspect.signature(run).parameters.values())
    except (TypeError, ValueError):
        return False
    P = inspect.Parameter
    if unbound and params and params[0].kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    if not params or params[0].kind not in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
        return False
    rest = params[1:]
    context = next((p for p in rest if p.name == "context"), None)
    if context is None or context.kind not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
        return False
    if context.kind is P.KEYWORD_ONLY and context.default is P.empty:
        return False
    return all(
        p.default is not P.empty or p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
        for p in rest
        if p is not context
    )


def _with_plain(agent: AgentCallable, module: Any, target: Any) -> AgentCallable:
    """``agent`` with the no-framework fallback over its module's plain tool functions."""
    from dataclasses import replace

    fn = target.run if is_adapter_run(getattr(target, "run", None)) else target
    return replace(agent, plain=PlainTools(agent_modules(module, fn), fn))


def inspect_agent(spec: str, fn: Callable[..., Any]) -> AgentCallable:
    """Read from ``fn``'s signature whether it is async and takes ``context`` / ``parameters``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins: call with the query alone
        return AgentCallable(spec, fn, _is_async(fn), False, False)
    params = sig.parameters.values()
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    var_pos = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    if not positional and not var_pos:
        raise AgentLoadError(
            f"--agent '{spec}': the callable must take the query as its first positional argument"
        )

    def takes(name: str) -> bool:
        p = sig.parameters.get(name)
        if p is None:
            return var_kw
        return p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

    return AgentCallable(spec, fn, _is_async(fn), takes("context"), takes("parameters"))


def _is_async(fn: Callable[..., Any]) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 - instances with an async __call__
    return inspect.iscoroutinefunction(fn) or (
        call is not None and not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)
    )


def adapter_agent(spec: str, adapter: Any) -> AgentCallable:
    """An AgenticAssure adapter (``run(input, context=None) -> AgentResult``) as the agent.

    ``context`` is ``None`` (what ``agenticassure run`` passes) unless the case has documents
    or parameters: then ``{"documents": [{"name", "content"}], "parameters": {...}}`` with the
    keys that have something. The result is mapped by ``from_agenticassure``.
    """
    run = adapter.run

    def adapter_context(
        context: Sequence[Document] = (), parameters: Mapping[str, str] | None = None
    ) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        if context:
            out["documents"] = [d.to_dict() for d in context]
        if parameters:
            out["parameters"] = dict(parameters)
        return out or None

    if _is_async(run):

        async def call_async(
            query: str,
            context: Sequence[Document] = (),
            parameters: Mapping[str, str] | None = None,
        ) -> AgentResult:
            return from_agenticassure(
                await run(query, context=adapter_context(context, parameters))
            )

        return AgentCallable(spec, call_async, True, True, True)

    def call(
        query: str, context: Sequence[Document] = (), parameters: Mapping[str, str] | None = None
    ) -> Any:
        out = run(query, context=adapter_context(context, parameters))
        if inspect.isawaitable(out):
            return _mapped(out)
        return from_agenticassure(out)

    return AgentCallable(spec, call, False, True, True)


async def _mapped(value: Awaitable[Any]) -> AgentResult:
    return from_agenticassure(await value)


def is_agenticassure_result(value: Any) -> bool:
    """An AgenticAssure ``AgentResult`` (or an object or dict of its shape)."""
    if isinstance(value, Mapping):
        return "output" in value and "response" not in value
    return hasattr(value, "output") and hasattr(value, "tool_calls")


def from_agenticassure(value: Any) -> AgentResult:
    """An AgenticAssure ``AgentResult`` as tracereplay's, field by field: ``output`` ->
    ``response``; each of ``tool_calls`` -> a ``ToolCallRecord`` (``name`` -> ``tool_name``,
    ``arguments``, ``result`` as text: a string as it is, ``None`` as ``""``, anything else as
    JSON), all in round 1 (AgenticAssure has no rounds). ``latency_ms`` and ``token_usage``
    have no field there: tracereplay measures the time itself, and tokens come from the LLM
    spans of an instrumented agent. A value of another shape goes to ``to_agent_result``."""
    if not is_agenticassure_result(value):
        return to_agent_result(value)
    get = value.get if isinstance(value, Mapping) else lambda k, d=None: getattr(value, k, d)
    output = get("output")
    if not isinstance(output, str):
        raise AgentResultError(
            f"the adapter returned an AgentResult whose output is {type(output).__name__}, not str"
        )
    calls: list[ToolCallRecord] = []
    for i, tc in enumerate(get("tool_calls") or []):
        tget = tc.get if isinstance(tc, Mapping) else lambda k, d=None, tc=tc: getattr(tc, k, d)
        name, arguments = tget("name"), tget("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            raise AgentResultError(
                f"the adapter returned tool_calls[{i}] without a name and arguments mapping"
            )
        calls.append(
            ToolCallRecord(
                round=1,
                tool_name=name,
                arguments=dict(arguments),
                result=_result_text(tget("result")),
            )
        )
    return AgentResult(response=output, tool_calls=calls, total_rounds=1 if calls else 0)


def _result_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import orjson

    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:
        return str(value)


def to_agent_result(value: Any) -> AgentResult:
    """The agent's return value as an ``AgentResult`` (a string becomes its ``response``; an
    AgenticAssure ``AgentResult`` is mapped by ``from_agenticassure``)."""
    if isinstance(value, AgentResult):
        return value
    if isinstance(value, str):
        return AgentResult(response=value)
    if is_agenticassure_result(value):
        return from_agenticassure(value)
    if isinstance(value, Mapping):
        try:
            return AgentResult.model_validate(dict(value))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in first.get("loc", ())) or "result"
            raise AgentResultError(
                f"the agent returned a dict that is not an AgentResult ({loc}: {first['msg']})"
            ) from None
    raise AgentResultError(
        f"the agent returned {type(value).__name__}; return a str or a tracereplay.AgentResult"
    )
