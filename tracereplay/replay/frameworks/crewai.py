"""CrewAI: a ``Crew`` or an ``Agent`` run as CrewAI runs it, its tools answered at ``BaseTool.run``.

``arun``: a ``Crew`` runs ``crew.copy().kickoff(inputs=...)`` (a copy per case, as CrewAI's
``kickoff_for_each`` does: a crew keeps its tasks' outputs), an ``Agent`` runs
``agent.copy().kickoff(query)``; the response is the output's ``raw`` text. A streaming crew
(``stream=True``) is iterated to its end and its ``result`` taken. Both run in a worker thread
(``asyncio.to_thread``, the attempt's context copied: CrewAI's own code is synchronous and
runs event loops of its own). The case's query reaches a crew as its kickoff inputs
(``crew_inputs``): a query that is a JSON object is the inputs as recorded; otherwise the
one ``{placeholder}`` its tasks and agents use gets the query (a crew with none runs its tasks
as written; several placeholders and a plain query: a one-line error).

``intercept``: every CrewAI tool executes through ``BaseTool.run`` / ``arun`` (CrewAI's native
tool calling registers ``tool.run``; the ``@tool`` decorator's ``Tool`` overrides both), or,
in text (ReAct) tool calling, through ``CrewStructuredTool.invoke`` / ``ainvoke``. Those methods
are patched on their classes for the replay: with a replay's answer in the context, the call
asks the recording (``answer(tool.name, kwargs)``) instead of running the tool's body, inside
the replay's ``execute_tool`` span, which is the one marked replayed. The patch sits *inside*
any instrumentor's wrapper already there (an instrumentation the agent's code switched on
that the replay leaves on), so that one's tool span holds the answer too; a recorded failure
is raised there, and CrewAI reports it to the model as it
reports a tool's exception (``Error executing tool: <message>``). ``RUN_LIVE`` runs the tool.

``instrument``: the replay's own GenAI spans of the crew, its agents, LLM calls and tools
(``crewai_spans``), on the replay's tracer provider, whatever instrumentation recorded the
agent; a CrewAI instrumentor the agent's code switched on is switched off, so no run is
recorded twice. CrewAI's own telemetry and tracing are off for the replay
(``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_TRACING_ENABLED``), so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import os
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.errors import TraceReplayError
from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    SharedPatch,
    ToolAnswer,
    ask,
    loaded_subclasses,
    mro_names,
)
from tracereplay.replay.frameworks.crewai_spans import spans, tool_span
from tracereplay.replay.frameworks.instrumentors import switch_off

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["CrewAIAgent", "crew_inputs"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_crewai_answer", default=None)
#: a patched tool method is running in this context (one it calls is not asked again)
_executing: ContextVar[bool] = ContextVar("tracereplay_crewai_tool_running", default=False)

#: (module, class, method) of every method a CrewAI tool executes through
_TOOL_METHODS: tuple[tuple[str, str, str], ...] = (
    ("crewai.tools.base_tool", "BaseTool", "run"),
    ("crewai.tools.base_tool", "BaseTool", "arun"),
    ("crewai.tools.base_tool", "Tool", "run"),
    ("crewai.tools.base_tool", "Tool", "arun"),
    ("crewai.tools.structured_tool", "CrewStructuredTool", "invoke"),
    ("crewai.tools.structured_tool", "CrewStructuredTool", "ainvoke"),
)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)\}")


class CrewInputsError(TraceReplayError):
    """The case's query cannot be given to the crew as its kickoff inputs."""


# ---------------------------------------------------------------------------------- tools
def _call_of(tool: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``(tool name, arguments)`` of one tool execution, as the tool span records them."""
    if method in ("invoke", "ainvoke"):  # CrewStructuredTool.invoke(input, config, **kwargs)
        original = getattr(tool, "_original_tool", None)
        name = getattr(original, "name", None) or tool.name
        raw = args[0] if args else kwargs.get("input", {})
        parsed = tool._parse_args(raw)
        return name, dict(parsed)
    if args and not kwargs and len(args) == 1 and isinstance(args[0], dict):
        return tool.name, dict(args[0])
    arguments = dict(kwargs)
    if args:
        arguments["args"] = list(args)
    return tool.name, arguments


def _answering(method: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (a tool class's run/arun/invoke/ainvoke) in the replay's tool span
    (``crewai_spans.tool_span``), asking the replay's answer first (``ask``: a recorded failure
    is raised, CrewAI makes it the tool error the model sees). A live answer calls
    ``original`` as it is, as CrewAI's tool call would (the patch sits inside an
    instrumentor's wrapper, see ``_slot``). A tool method that another patched one calls (a
    tool class's own ``run`` calling ``super().run``) runs as it is: the call was asked once."""

    def asked(self: Any, name: str, arguments: dict[str, Any]) -> Any:
        if _answer.get() is None:  # no replay here: live
            return ask(None, "", {})
        return ask(_answer, name, arguments)

    if asyncio.iscoroutinefunction(original):

        @functools.wraps(original)
        async def patched_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _executing.get():
                return await original(self, *args, **kwargs)
            name, arguments = _call_of(self, method, args, kwargs)
            token = _executing.set(True)
            try:
                with tool_span(name, arguments) as result:
                    answer = asked(self, name, arguments)
                    value = await original(self, *args, **kwargs) if answer.live else answer.value
                    result(value)
                    return value
            finally:
                _executing.reset(token)

        return patched_async

    @functools.wraps(original)
    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _executing.get():
            return original(self, *args, **kwargs)
        name, arguments = _call_of(self, method, args, kwargs)
        token = _executing.set(True)
        try:
            with tool_span(name, arguments) as result:
                answer = asked(self, name, arguments)
                value = original(self, *args, **kwargs) if answer.live else answer.value
                result(value)
                return value
        finally:
            _executing.reset(token)

    return patched


def _slot(cls: type, method: str) -> tuple[Any, str, Any] | None:
    """Where ``cls.method``'s own function lives: ``(holder, attribute, function)``. An
    instrumentor's wrapper already on the class (wrapt's ``FunctionWrapper``) holds the function
    as ``__wrapped__``: the patch goes there, inside the wrapper's span."""
    current = cls.__dict__.get(method)
    if current is None:
        return None
    holder, attribute = cls, method
    while _is_wrapt(current):
        holder, attribute = current, "__wrapped__"
        current = current.__wrapped__
    return holder, attribute, current


def _is_wrapt(value: Any) -> bool:
    """A wrapt proxy (what OpenTelemetry instrumentors patch methods with; its ``__wrapped__``
    is settable), by its class names: wrapt's C and Python proxies are distinct classes."""
    return any(c.__name__ == "ObjectProxy" for c in type(value).__mro__)


_saved: list[tuple[Any, str, Any]] = []


def _tool_methods() -> Iterator[tuple[type, str]]:
    """Every ``(class, method)`` a CrewAI tool executes through: CrewAI's own, then those of
    the ``BaseTool`` subclasses loaded by now that define ``run`` / ``arun`` themselves (a
    tool class may override ``run``, not only ``_run``)."""
    seen: set[tuple[type, str]] = set()
    for module, cls_name, method in _TOOL_METHODS:
        try:
            cls = getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError):
            continue
        seen.add((cls, method))
        yield cls, method
    try:
        base = importlib.import_module("crewai.tools.base_tool").BaseTool
    except (ImportError, AttributeError):
        return
    for cls in loaded_subclasses(base):
        for method in ("run", "arun"):
            if method in cls.__dict__ and (cls, method) not in seen:
                seen.add((cls, method))
                yield cls, method


def _install() -> None:
    for cls, method in _tool_methods():
        slot = _slot(cls, method)
        if slot is None:
            continue
        holder, attribute, function = slot
        setattr(holder, attribute, _answering(method, function))
        _saved.append((holder, attribute, function))


def _uninstall() -> None:
    while _saved:
        holder, attribute, function = _saved.pop()
        setattr(holder, attribute, function)


_patch = SharedPatch(_install, _uninstall)


# ---------------------------------------------------------------------------------- inputs
def _placeholders(crew: Any) -> list[str]:
    """The ``{name}`` placeholders of a crew's tasks and agents (their texts before any
    kickoff filled them in), in order of first use."""
    texts: list[str] = []
    for task in getattr(crew, "tasks", None) or []:
        texts.append(getattr(task, "_original_description", None) or task.description or "")
        texts.append(getattr(task, "_original_expected_output", None) or task.expected_output or "")
    for agent in getattr(crew, "agents", None) or []:
        for field in ("role", "goal", "backstory"):
            texts.append(
                getattr(agent, f"_original_{field}", None) or getattr(agent, field, "") or ""
            )
    names: list[str] = []
    for text in texts:
        for name in _PLACEHOLDER.findall(str(text)):
            if name not in names:
                names.append(name)
    return names


def crew_inputs(crew: Any, query: str) -> dict[str, Any] | None:
    """The kickoff inputs that give ``query`` to ``crew``: a query that is a JSON object is the
    inputs (a recorded kickoff with several inputs); else the one placeholder of the crew's
    tasks and agents gets the query; ``None`` for a crew without placeholders."""
    import orjson

    text = query.strip()
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
    names = _placeholders(crew)
    if not names:
        return None
    if len(names) == 1:
        return {names[0]: query}
    raise CrewInputsError(
        f"the crew's tasks take {len(names)} inputs ({', '.join('{' + n + '}' for n in names)}): "
        "give the case's query as a JSON object of them"
    )


# ---------------------------------------------------------------------------------- spans
#: CrewAI instrumentors the agent's code may switch on (module, class)
_USERS_INSTRUMENTORS: tuple[tuple[str, str], ...] = (
    ("openinference.instrumentation.crewai", "CrewAIInstrumentor"),
    ("opentelemetry.instrumentation.crewai", "CrewAIInstrumentor"),
)
_ENVIRONMENT = {"CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false"}


def _instrumented(tracer_provider: TracerProvider) -> contextlib.ExitStack:
    """Telemetry off, the tool patch in place, then the replay's spans (``crewai_spans``) on
    ``tracer_provider``; undone by closing the stack. Entered by the first replay running and
    closed by the last (the patches are process-wide)."""
    stack = contextlib.ExitStack()
    saved = {k: os.environ.get(k) for k in _ENVIRONMENT}
    os.environ.update({k: v for k, v in _ENVIRONMENT.items() if saved[k] is None})
    stack.callback(_restore_environment, saved)
    switch_off(_USERS_INSTRUMENTORS)  # theirs would record each run a second time
    stack.enter_context(_patch.held())
    stack.enter_context(spans(tracer_provider))
    return stack


def _restore_environment(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)


_instrumentation = SharedContext()


# ---------------------------------------------------------------------------------- adapter
def _is_crew(obj: Any) -> bool:
    return any(n.startswith("crewai.") and n.endswith(".Crew") for n in mro_names(obj))


def _output_text(output: Any) -> str:
    """A kickoff's output as text: ``raw`` of a ``CrewOutput`` / ``LiteAgentOutput``; a
    streaming output is read to its end first."""
    if any(n.endswith(".StreamingOutputBase") for n in mro_names(output)):
        for _ in output:  # CrewStreamingOutput: the chunks, then the result
            pass
        output = output.result
    raw = getattr(output, "raw", output)
    return raw if isinstance(raw, str) else str(raw)


class CrewAIAgent(FrameworkAgent):
    """A CrewAI ``Crew`` or ``Agent``."""

    framework: ClassVar[str] = "crewai"
    distribution: ClassVar[str] = "crewai"
    tested: ClassVar[tuple[str, ...]] = ("==1.15.*",)

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return _is_crew(obj) or any(
            n.startswith("crewai.") and n.endswith(".BaseAgent") for n in mro_names(obj)
        )

    async def arun(self, query: str) -> str:
        if _is_crew(self.obj):
            inputs = crew_inputs(self.obj, query)
            crew = self.obj.copy()
            run: Callable[[], Any] = functools.partial(crew.kickoff, inputs=inputs)
        else:
            run = functools.partial(self.obj.copy().kickoff, query)
        # the attempt's context goes along (asyncio.to_thread copies it)
        output = await asyncio.to_thread(lambda: _output_text(run()))
        return output.strip()

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _instrumentation.use(functools.partial(_instrumented, tracer_provider))
