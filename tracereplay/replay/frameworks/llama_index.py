"""LlamaIndex: a workflow agent (``FunctionAgent``, ``ReActAgent``, ``CodeActAgent``, any
``BaseWorkflowAgent``) or an ``AgentWorkflow`` run as LlamaIndex runs it, its tools answered in
``FunctionTool.acall``.

``arun``: ``await agent.run(user_msg=query)`` (the workflow handler, awaited on the replay's
event loop: a LlamaIndex workflow needs a running loop); the response is ``str(result)``, the
final ``AgentOutput``'s text.

``intercept``: every tool an agent workflow runs is awaited as ``tool.acall(**tool_kwargs)``
(``BaseWorkflowAgent._call_tool`` and ``AgentWorkflow._call_tool``), and a ``FunctionTool``'s
``acall`` calls the tool's function, then wraps its value into a ``ToolOutput``. For the
replay, ``FunctionTool.acall`` is replaced by one that asks the recording first, under the same
instrumentation span as the original (LlamaIndex's dispatcher span, hence OpenInference's TOOL
span ``FunctionTool.acall``): the value becomes the ``ToolOutput`` the function's value would
(same blocks, raw input and output); a recorded failure is raised where the function would
raise, so ``_call_tool`` turns it into the error ``ToolOutput`` the model saw. The framework's
own routing tools (``AgentWorkflow``'s ``handoff``, whose function lives in
``llama_index.core.agent`` and changes the workflow's state) are asked too, and then run, since
a recording cannot route the workflow. ``RUN_LIVE`` runs the real function. The Context
argument a tool may take is not one of its arguments.

``instrument``: LlamaIndex has no native OpenTelemetry: OpenInference's
``LlamaIndexInstrumentor`` (``openinference-instrumentation-llama-index``) is installed on the
replay's tracer provider for the replay (unless the user's code instrumented already), and
removed after.
"""

from __future__ import annotations

import contextlib
import functools
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
from tracereplay.replay.frameworks.instrumentors import instrumented

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["LlamaIndexAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_llama_index_answer", default=None)
_ACCEPTED = {
    "llama_index.core.agent.workflow.base_agent.BaseWorkflowAgent",
    "llama_index.core.agent.workflow.multi_agent_workflow.AgentWorkflow",
}
#: where the framework's own tools (the handoff) are defined
_FRAMEWORK_TOOLS = "llama_index.core.agent."


def _arguments(tool: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The tool's own arguments: its keyword arguments less the Context parameter, plus a lone
    positional value as ``input``."""
    ctx_param = getattr(tool, "ctx_param_name", None)
    out = {k: v for k, v in kwargs.items() if k != ctx_param}
    if len(args) == 1 and not out:
        out = {"input": args[0]}
    return out


def _tool_output(tool: Any, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``ToolOutput`` ``FunctionTool.acall`` makes of the function's value ``value``."""
    from llama_index.core.tools.types import ToolOutput

    ctx_param = getattr(tool, "ctx_param_name", None)
    return ToolOutput(
        blocks=tool._parse_tool_output(value),
        tool_name=tool.metadata.get_name(),
        raw_input={"args": args, "kwargs": {k: v for k, v in kwargs.items() if k != ctx_param}},
        raw_output=value,
    )


def _routes(tool: Any) -> bool:
    """A framework tool that routes the workflow (its function is LlamaIndex's own)."""
    fn = getattr(tool, "_async_fn", None) or getattr(tool, "_fn", None)
    fn = getattr(fn, "__wrapped__", fn)
    return str(getattr(fn, "__module__", "")).startswith(_FRAMEWORK_TOOLS)


def _function_tool() -> Any:
    from llama_index.core.tools.function_tool import FunctionTool

    return FunctionTool


async def _acall(wrapped: Any, tool: Any, args: tuple, kwargs: dict) -> Any:
    """``FunctionTool.acall``: in a replay, the answering one, under the same dispatcher span
    (``wrapped`` is the original under its span; its ``__wrapped__`` the method itself)."""
    if _answer.get() is None:
        return await wrapped(*args, **kwargs)
    body = getattr(wrapped, "__wrapped__", wrapped)
    answering = _spanned(getattr(body, "__func__", body))
    return await answering.__get__(tool, type(tool))(*args, **kwargs)


@functools.cache
def _spanned(body: Any) -> Any:
    """``body`` (``FunctionTool.acall``'s own function) asking the replay first, in a
    LlamaIndex dispatcher span named as the original's (OpenInference's TOOL span
    ``FunctionTool.acall``)."""
    from llama_index.core.instrumentation import get_dispatcher

    async def acall(self: Any, *args: Any, **kwargs: Any) -> Any:
        # a recorded failure is raised where the function raises: _call_tool makes it the
        # error ToolOutput
        asked = ask(
            _answer,
            self.metadata.get_name(),
            lambda: _arguments(self, args, {**self.partial_params, **kwargs}),
        )
        if asked.live:
            return await arun_live(asked, body, self, *args, **kwargs)
        value = asked.value
        if _routes(self):  # the recording agrees it succeeded: run it to route the workflow
            return await body(self, *args, **kwargs)
        return _tool_output(self, value, args, kwargs)

    acall.__qualname__ = body.__qualname__  # the span's name: FunctionTool.acall
    acall.__name__ = body.__name__
    acall.__module__ = body.__module__
    return get_dispatcher(body.__module__).span(acall)


_patch = wrapt_patch(_function_tool, "acall", _acall)
_tracing = SharedContext()


class LlamaIndexAgent(FrameworkAgent):
    """A LlamaIndex workflow agent or ``AgentWorkflow``."""

    framework: ClassVar[str] = "llama-index"
    distribution: ClassVar[str] = "llama-index-core"
    tested: ClassVar[tuple[str, ...]] = ("==0.14.*",)
    conversion_forms: ClassVar[tuple[str, ...]] = ("llama_index",)

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return not _ACCEPTED.isdisjoint(mro_names(obj))

    async def arun(self, query: str) -> str:
        result = await self.obj.run(user_msg=query)
        return str(result).strip()

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        return _tracing.use(
            functools.partial(
                instrumented,
                "openinference.instrumentation.llama_index",
                "LlamaIndexInstrumentor",
                tracer_provider,
            )
        )
