"""smolagents: a ``ToolCallingAgent`` or ``CodeAgent`` (any ``MultiStepAgent``) run as
smolagents runs it, its tools answered at ``Tool.forward`` and its managed agents at their call.

``arun``: ``agent.run(query)`` (synchronous: in a worker thread that carries the replay's
context, one case at a time per agent, since an agent keeps its run's memory on itself); the
response is the final answer as text.

``intercept``: an agent calls a tool as ``tool(**arguments, sanitize_inputs_outputs=True)``
(``ToolCallingAgent.execute_tool_call``; a ``CodeAgent``'s code calls the same ``Tool``
objects), and ``Tool.__call__`` validates and converts the inputs, calls ``self.forward``, then
converts the output. For the replay, ``forward`` of every tool of the agent and of its managed
agents (found through ``agent.tools`` and ``agent.managed_agents``) asks the recording
instead, inside ``Tool.__call__`` and so inside OpenInference's TOOL span: the value is the
tool's output; a recorded failure is raised where ``forward`` raises, so smolagents reports it
to the model as it did (``Error executing tool ...``). The agent's ``final_answer`` tool is the
run's answer, not a user tool: it runs. A managed agent is called as ``agent(task, ...)``
(``MultiStepAgent.__call__``): that call is answered itself (the managed agent does not run),
its recorded answer given the manager in smolagents' report template, as the real call does.
``RUN_LIVE`` runs the real tool or agent.

``instrument``: smolagents has no native OpenTelemetry: OpenInference's
``SmolagentsInstrumentor`` (``openinference-instrumentation-smolagents``) is installed on the
replay's tracer provider for the replay (unless the user's code instrumented already), and
removed after.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    ask,
    mro_names,
    run_live,
    wrapt_patch,
)
from tracereplay.replay.frameworks.instrumentors import instrumented

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["SmolagentsAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_smolagents_answer", default=None)
_AGENT = "smolagents.agents.MultiStepAgent"
_FINAL_ANSWER = "smolagents.default_tools.FinalAnswerTool"


def _tools_of(agent: Any, seen: set[int] | None = None) -> list[Any]:
    """The tools of ``agent`` and of its managed agents, each once."""
    seen = set() if seen is None else seen
    if id(agent) in seen:
        return []
    seen.add(id(agent))
    tools = [t for t in (getattr(agent, "tools", None) or {}).values()]
    for managed in (getattr(agent, "managed_agents", None) or {}).values():
        tools.extend(_tools_of(managed, seen))
    return tools


class _Forwards:
    """``forward`` of the agent's tools replaced by one asking the replay's answer, refcounted
    per tool across the replays running at once (an answer is the replay's, in a ContextVar)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[int, list[Any]] = {}  # id(tool) -> [tool, saved, users]

    @contextlib.contextmanager
    def patched(self, tools: list[Any]) -> Iterator[None]:
        tools = [t for t in tools if _FINAL_ANSWER not in mro_names(t)]
        with self._lock:
            for tool in tools:
                entry = self._users.get(id(tool))
                if entry is None:
                    saved = tool.__dict__.get("forward", _MISSING)
                    entry = self._users[id(tool)] = [tool, saved, 0]
                    tool.forward = _answering_forward(tool, tool.forward)
                entry[2] += 1
        try:
            yield
        finally:
            with self._lock:
                for tool in tools:
                    entry = self._users[id(tool)]
                    entry[2] -= 1
                    if entry[2] == 0:
                        del self._users[id(tool)]
                        if entry[1] is _MISSING:
                            del tool.forward
                        else:
                            tool.forward = entry[1]


_MISSING = object()
_forwards = _Forwards()


def _answering_forward(tool: Any, forward: Any) -> Any:
    names = list(getattr(tool, "inputs", None) or {})

    @functools.wraps(forward)
    def replayed_forward(*args: Any, **kwargs: Any) -> Any:
        # a recorded failure is raised where forward raises: smolagents reports it to the model
        asked = ask(_answer, tool.name, lambda: {**dict(zip(names, args)), **kwargs})
        if asked.live:
            return run_live(asked, forward, *args, **kwargs)
        return asked.value

    return replayed_forward


def _multi_step_agent() -> Any:
    from smolagents.agents import MultiStepAgent

    return MultiStepAgent


def _managed_call(wrapped: Any, agent: Any, args: tuple, kwargs: dict) -> Any:
    """``MultiStepAgent.__call__(task, **kwargs)`` (a managed agent called by its manager),
    answered in smolagents' report template."""
    from smolagents.agents import populate_template

    def arguments() -> dict[str, Any]:
        rest = dict(kwargs)
        task = args[0] if args else rest.pop("task")
        return {"task": task, **rest}

    asked = ask(_answer, agent.name, arguments)
    if asked.live:
        return run_live(asked, wrapped, *args, **kwargs)
    return populate_template(
        agent.prompt_templates["managed_agent"]["report"],
        variables={"name": agent.name, "final_answer": asked.value},
    )


_managed_patch = wrapt_patch(_multi_step_agent, "__call__", _managed_call)
_tracing = SharedContext()


class SmolagentsAgent(FrameworkAgent):
    """A smolagents agent (any ``MultiStepAgent``)."""

    framework: ClassVar[str] = "smolagents"
    distribution: ClassVar[str] = "smolagents"
    tested: ClassVar[tuple[str, ...]] = ("==1.26.*",)
    conversion_forms: ClassVar[tuple[str, ...]] = ("smolagents",)
    one_case_at_a_time = True  # a run's conversation lives on the object

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return _AGENT in mro_names(obj)

    async def arun(self, query: str) -> str:
        import asyncio

        if getattr(self, "_run_lock", None) is None:
            self._run_lock = asyncio.Lock()
        async with self._run_lock:  # the agent keeps the run's memory on itself
            output = await asyncio.to_thread(self.obj.run, query)
        output = getattr(output, "output", output)  # a RunResult (return_full_result)
        return output if isinstance(output, str) else str(output)

    @contextlib.contextmanager
    def intercept(self, answer: ToolAnswer) -> Iterator[None]:
        with _managed_patch.answering(_answer, answer), _forwards.patched(_tools_of(self.obj)):
            yield

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracing.use(
            functools.partial(
                instrumented,
                "openinference.instrumentation.smolagents",
                "SmolagentsInstrumentor",
                tracer_provider,
            )
        )
