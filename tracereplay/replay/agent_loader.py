"""Loading the agent to replay (``module:attr``) and calling it the way the suite expects.

``module:attr`` names a callable or an agent object:

- an object a framework adapter accepts (``tracereplay.replay.frameworks``: a
  ``pydantic_ai.Agent``, an OpenAI Agents SDK ``Agent``, a compiled LangGraph graph...) is run
  the way its framework runs it, on the case's query, its tools intercepted there. Adapters are
  asked before the AgenticAssure shape below: LlamaIndex and smolagents agents have a ``run``
  method too;
- an AgenticAssure adapter is accepted as it is: a class (instantiated without arguments, as
  ``agenticassure run --adapter`` does) or an object with ``run(input, context=None)``
  returning an AgenticAssure ``AgentResult``; ``from_agenticassure`` maps that onto
  tracereplay's ``AgentResult`` field by field. A ``run`` method of another signature makes no
  adapter (``is_adapter_run``);
- any other object (a framework no adapter knows) is run through its entry point by the generic
  adapter (``generic_agent``: ``run``, ``invoke``, ``kickoff``, ``forward``, ``__call__``...,
  or the one ``--agent-call NAME`` names; ``--agent-call`` also makes a framework's agent go
  that way). An object with none that takes a question is refused with one line saying why;
- a callable is called as ``fn(query, context=documents, parameters=params)``, and with
  ``history=[{"role", "content"}, ...]`` when the case has a history (the conversation before
  its question); a keyword it does not declare is left out (``**kwargs`` takes them all), so
  ``fn(query)`` is enough. It may be
  ``async``, and returns the response text or an ``AgentResult``. When the agent's code holds
  agent objects a framework adapter accepts (``def answer(q): return agent.run_sync(q)``),
  their adapters intercept their tools while the function runs (``reached``).

Without a framework adapter, the tool functions are answered from the recording wherever the
agent's code holds them (``tool_functions``, the ``tools`` field).
"""

from __future__ import annotations

import asyncio
import collections.abc
import importlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from tracereplay.errors import TraceReplayError, one_line
from tracereplay.models import AgentResult, Document, ToolCallRecord
from tracereplay.replay.agent_telemetry import watch_providers
from tracereplay.replay.answering.tool_functions import ToolFunctions
from tracereplay.replay.frameworks import (
    FrameworkAgent,
    framework_agent,
    supported_frameworks,
)
from tracereplay.replay.generic_agent import EntryPointError, answer_text, entry_point
from tracereplay.replay.user_code import user_modules


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
    #: no framework adapter: the tool functions of the agent's code (answered by name)
    tools: ToolFunctions | None = None
    #: a function whose code holds agents a framework adapter accepts: their adapters
    reached: tuple[FrameworkAgent, ...] = ()
    #: an async agent of a framework (adapter or generic): every attempt runs on one shared
    #: event loop (its clients bind to the loop they first ran on)
    shared_loop: bool = False
    #: it takes a case's history (``history=``: a function declaring it, or an adapter whose
    #: framework takes earlier messages)
    takes_history: bool = False

    @property
    def adapters(self) -> tuple[FrameworkAgent, ...]:
        """The framework adapters running its tools: the named agent's, or those its code holds."""
        return (self.framework,) if self.framework is not None else self.reached

    @property
    def name(self) -> str:
        """The callable's name (``module:callable`` minus the module)."""
        return self.spec.rpartition(":")[2]

    def kwargs(
        self,
        documents: Sequence[Document],
        parameters: Mapping[str, str],
        history: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        """The keyword arguments this callable gets for one case (``history`` whenever the
        callable takes it: empty for a case's first turn or a one-question case)."""
        kwargs: dict[str, Any] = {}
        if self.takes_context:
            kwargs["context"] = list(documents)
        if self.takes_parameters:
            kwargs["parameters"] = dict(parameters)
        if self.takes_history:
            kwargs["history"] = [dict(m) for m in history]
        return kwargs

    def call_sync(
        self,
        query: str,
        documents: Sequence[Document],
        parameters: Mapping[str, str],
        history: Sequence[Mapping[str, str]] = (),
    ) -> Any:
        """Call a sync agent (an async one is run to completion on a fresh event loop)."""
        out = self.fn(query, **self.kwargs(documents, parameters, history))
        if inspect.isawaitable(out):
            return asyncio.run(_await(out))
        return out

    async def call_async(
        self,
        query: str,
        documents: Sequence[Document],
        parameters: Mapping[str, str],
        history: Sequence[Mapping[str, str]] = (),
    ) -> Any:
        """Call the agent from a coroutine (a sync agent runs right here, blocking the loop)."""
        out = self.fn(query, **self.kwargs(documents, parameters, history))
        if inspect.isawaitable(out):
            out = await out
        return out


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def load_agent(spec: str, call: str | None = None) -> AgentCallable:
    """Import ``module:callable`` (dotted attributes allowed after the colon) from the current
    directory or ``PYTHONPATH``; one-line ``AgentLoadError`` when that is impossible. ``call``
    (``--agent-call``): the entry point of an agent object to run it through."""
    module_name, sep, attr_path = spec.strip().partition(":")
    if not sep or not module_name or not attr_path:
        raise AgentLoadError(
            f"--agent '{spec}' must look like module:callable (e.g. my_agent:run_agent)"
        )
    watch_providers()  # the tracer providers the agent's import makes (``agent_telemetry``)
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
        adapter = framework_agent(target, spec) if call is None else None
        if adapter is not None:
            return AgentCallable(
                spec,
                adapter.arun,
                True,
                False,
                False,
                framework=adapter,
                shared_loop=True,
                takes_history=adapter.takes_history,
            )
        if call is None and is_adapter_run(getattr(target, "run", None)):
            return _with_tools(adapter_agent(spec, target), module, target)
        return _with_tools(generic_agent(spec, attr_path, target, call), module, target)
    if call is not None:
        raise AgentLoadError(
            f"--agent '{spec}': --agent-call names an entry point of an agent object; "
            f"{attr_path} is a {'class' if inspect.isclass(target) else 'function'}"
        )
    if not callable(target) or (inspect.isclass(target) and callable(getattr(target, "run", None))):
        why = "point --agent at an instance" if inspect.isclass(target) else "not callable"
        raise AgentLoadError(refusal(spec, attr_path, target, why))
    agent = inspect_agent(spec, target)
    reached = reached_agents(module, spec)
    if reached:
        return replace(agent, reached=reached, shared_loop=agent.is_async)
    return _with_tools(agent, module, target)


def refusal(spec: str, attr_path: str, target: Any, why: str) -> str:
    """The one line for an object ``--agent`` cannot run: what it is, why, what is accepted."""
    what = "class" if inspect.isclass(target) else type(target).__name__
    return (
        f"--agent '{spec}': {attr_path} is a {what} the replay cannot run ({why}); --agent "
        "takes a function fn(query) (async too), an agent object of "
        + ", ".join(supported_frameworks())
        + " or of any framework (run through its run, invoke, kickoff, forward or __call__ "
        "method; --agent-call NAME names another), or an AgenticAssure adapter "
        "(docs/evaluating.md)"
    )


def generic_agent(spec: str, attr_path: str, target: Any, call: str | None) -> AgentCallable:
    """An agent object no adapter knows, run through its entry point (``generic_agent``)."""
    try:
        name, enter = entry_point(target, call)
    except EntryPointError as exc:
        raise AgentLoadError(refusal(spec, attr_path, target, str(exc))) from None

    def answered(value: Any) -> Any:
        if isinstance(value, (str, AgentResult)):
            return value
        text = answer_text(value)
        if text is None:
            raise AgentResultError(
                f"{attr_path}.{name}() returned {type(value).__name__}, with no answer text in "
                "it (text, .output, .content, .text, .final_output, messages): point --agent at "
                "a function that returns the answer"
            )
        return text

    async def read_async(value: Awaitable[Any]) -> Any:
        return answered(await value)

    async def read_stream(items: Any) -> Any:
        return answered([item async for item in items])

    async def drive(handle: Any) -> Any:
        async with handle:
            out = handle.result()
            return answered(await out if inspect.isawaitable(out) else out)

    def run(query: str, history: Sequence[Mapping[str, str]] = ()) -> Any:
        out = enter(query, history)
        if hasattr(out, "__aenter__") and callable(getattr(out, "result", None)):
            return drive(out)  # a run handle: entered, driven to its result
        if inspect.isasyncgen(out) or isinstance(out, collections.abc.AsyncIterator):
            return read_stream(out)  # yielded: the answer is the last item's
        if inspect.isgenerator(out):
            return answered(list(out))
        return read_async(out) if inspect.isawaitable(out) else answered(out)

    method = target if name == "__call__" else getattr(target, name, None)
    # (a run handle's driving is a coroutine too: it runs on the shared loop)
    is_async = _is_async(method) or inspect.isasyncgenfunction(method) or _returns_handle(method)
    return AgentCallable(
        spec, run, is_async, False, False, shared_loop=True, takes_history=enter.takes_history
    )


def _returns_handle(method: Any) -> bool:
    """Whether ``method`` is annotated to return a run handle (an async context manager)."""
    try:
        returned = inspect.signature(method, eval_str=True).return_annotation
    except Exception:
        returned = getattr(method, "__annotations__", {}).get("return")
    origin = getattr(returned, "__origin__", returned)
    return inspect.isclass(origin) and hasattr(origin, "__aenter__")


def reached_agents(module: Any, spec: str) -> tuple[FrameworkAgent, ...]:
    """The framework agents the agent's code holds (module globals of its modules, and the
    values of the dicts, lists and tuples among them), each with its adapter."""
    out: list[FrameworkAgent] = []
    seen: set[int] = set()
    for mod in user_modules([module]):
        values = list(vars(mod).values())
        for value in values:
            if isinstance(value, (dict, list, tuple)):
                inner = value.values() if isinstance(value, dict) else value
                values.extend(
                    v for v in list(inner)[:200] if not isinstance(v, (dict, list, tuple))
                )
        for value in values:
            if id(value) in seen or inspect.isroutine(value) or inspect.isclass(value):
                continue
            if inspect.ismodule(value) or isinstance(value, (str, int, float, bytes, type(None))):
                continue
            seen.add(id(value))
            adapter = framework_agent(value, spec)
            if adapter is not None:
                out.append(adapter)
    return tuple(out)


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


def _with_tools(agent: AgentCallable, module: Any, target: Any) -> AgentCallable:
    """``agent`` with its code's tool functions answered from the recording."""
    return replace(agent, tools=ToolFunctions([module], target))


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

    return AgentCallable(
        spec,
        fn,
        _is_async(fn),
        takes("context"),
        takes("parameters"),
        takes_history=takes("history"),
    )


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
