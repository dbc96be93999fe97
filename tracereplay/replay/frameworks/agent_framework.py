"""Microsoft Agent Framework: an agent (``agent_framework.Agent``, any ``BaseAgent``) or a
workflow (``WorkflowBuilder(...).build()``) run as Agent Framework runs it, its tools answered
inside Agent Framework's tool invocation.

``arun``: ``await obj.run(query)``; an agent's run with no session is a fresh conversation, and
its response is ``AgentResponse.text``; a workflow (one run at a time per instance: the
framework refuses concurrent runs) answers with its last output (an agent's response as its
text, a string as it is, anything else as JSON).

``intercept``: every function tool an agent calls goes through ``FunctionTool.invoke``, which
validates the model's arguments, opens the ``execute_tool <name>`` span and calls
``FunctionTool._invoke_function(call_kwargs)`` (the user's function) inside it and inside the
framework's error handling. For the replay that call asks the recording first: the value is
the function's return value (the framework parses it into the result the model sees, as it
does a real one); a recorded failure is raised there, so the model gets the error result it
got; ``RUN_LIVE`` runs the function.

``instrument``: Agent Framework traces through OpenTelemetry's global tracer provider (the
replay's); for the replay its instrumentation is on with sensitive data (messages, tool
arguments and results), so the replay run has what the checks read, unless the application
called ``disable_instrumentation()``. The settings are put back after.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    arun_live,
    ask,
    mro_names,
    wrapt_patch,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["AgentFrameworkAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar(
    "tracereplay_agent_framework_answer", default=None
)
_tracing = SharedContext()

#: Agent Framework's agent bases and its workflow
_AGENTS = ("BaseAgent", "RawAgent", "Agent")
_WORKFLOW = "agent_framework._workflows._workflow.Workflow"


def _function_tool() -> Any:
    from agent_framework import FunctionTool

    return FunctionTool


async def _invoke_function(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``FunctionTool._invoke_function(call_kwargs)``, asking the replay first."""
    call_kwargs = args[0] if args else kwargs["call_kwargs"]
    context_name = getattr(tool, "_context_parameter_name", None)
    # a recorded failure is raised: the framework makes it the error result the model sees
    asked = ask(
        _answer,
        tool.name,
        lambda: {k: v for k, v in dict(call_kwargs).items() if k != context_name},
    )
    if asked.live:
        return await arun_live(asked, wrapped, *args, **kwargs)
    return asked.value


_patch = wrapt_patch(_function_tool, "_invoke_function", _invoke_function)


class AgentFrameworkAgent(FrameworkAgent):
    """A Microsoft Agent Framework agent or workflow."""

    framework: ClassVar[str] = "agent-framework"
    distribution: ClassVar[str] = "agent-framework-core"
    tested: ClassVar[tuple[str, ...]] = ("==1.23.*",)

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(
            n == _WORKFLOW or (n.startswith("agent_framework.") and n.rpartition(".")[2] in _AGENTS)
            for n in mro_names(obj)
        )

    @property
    def _is_workflow(self) -> bool:
        return _WORKFLOW in mro_names(self.obj)

    async def arun(self, query: str) -> str:
        if not self._is_workflow:
            return (await self.obj.run(query)).text
        if getattr(self, "_run_lock", None) is None:
            self._run_lock = asyncio.Lock()
        async with self._run_lock:
            result = await self.obj.run(query)
        outputs = result.get_outputs()
        return _output_text(outputs[-1]) if outputs else ""

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracing.use(_sensitive_tracing)


def _output_text(output: Any) -> str:
    """A workflow output as text: an agent response's text, a string, else JSON."""
    text = getattr(output, "text", None)
    if isinstance(text, str):
        return text
    if isinstance(output, str):
        return output
    import orjson

    from tracereplay.sdk.content import json_default

    return orjson.dumps(output, default=json_default).decode()


@contextlib.contextmanager
def _sensitive_tracing() -> Iterator[None]:
    """Agent Framework's instrumentation on, with sensitive data, while replays run (unless the
    application disabled it); its settings put back after."""
    from agent_framework.observability import OBSERVABILITY_SETTINGS as settings

    if getattr(settings, "_user_disabled", False):
        yield
        return
    saved = (settings.enable_instrumentation, settings.enable_sensitive_data)
    settings.enable_instrumentation = True
    settings.enable_sensitive_data = True
    try:
        yield
    finally:
        settings.enable_sensitive_data = saved[1]
        settings.enable_instrumentation = saved[0]
