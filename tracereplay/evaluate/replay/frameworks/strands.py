"""strands-agents: a strands ``Agent`` run as strands runs it, its tools answered through the
``BeforeToolCallEvent`` hook.

``arun``: ``await agent.invoke_async(query)`` on an empty conversation (the agent's own history
is put back after); the response is ``str(result)`` (the final message's text).

``intercept``: strands fires ``BeforeToolCallEvent`` before every tool execution of every agent
(the agent, agents its tools call, swarm and graph nodes), and a hook may replace the event's
``selected_tool``: the documented way to change which tool runs. For the replay, after the
agent's own hooks ran, the selected tool is replaced by one that answers from the recording:
it runs inside strands' tool span and error handling, so a recorded failure is raised there and
reaches the model as strands reports a tool error (``Error: <message>``), and the value is the
tool's result (text; anything else as JSON text). ``RUN_LIVE`` runs the selected tool itself.

``instrument``: nothing; strands traces through OpenTelemetry's global tracer provider, which is
the replay's.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any, ClassVar

from tracereplay.evaluate.replay.frameworks.base import (
    FrameworkAgent,
    SharedPatch,
    ToolAnswer,
    mark_replayed,
    mro_names,
)

__all__ = ["StrandsAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_strands_answer", default=None)
_state: dict[str, Any] = {"original": None}


def _replay_tool(inner: Any, answer: ToolAnswer) -> Any:
    """An ``AgentTool`` standing in for ``inner``: answers from the recording."""
    from strands.types.tools import AgentTool

    from tracereplay.sdk.replay_hook import RUN_LIVE

    class ReplayedTool(AgentTool):
        @property
        def tool_name(self) -> str:
            return inner.tool_name

        @property
        def tool_spec(self) -> Any:
            return inner.tool_spec

        @property
        def tool_type(self) -> str:
            return inner.tool_type

        async def stream(
            self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any
        ) -> AsyncIterator[Any]:
            from strands.types.events import ToolResultEvent

            arguments = tool_use.get("input") or {}
            try:
                value = answer(tool_use["name"], dict(arguments))
            except Exception:
                mark_replayed()
                raise  # strands makes it the error result the model sees
            if value is RUN_LIVE:
                async for event in inner.stream(tool_use, invocation_state, **kwargs):
                    yield event
                return
            mark_replayed()
            yield ToolResultEvent(
                {
                    "toolUseId": str(tool_use.get("toolUseId")),
                    "status": "success",
                    "content": [{"text": value if isinstance(value, str) else _json(value)}],
                }
            )

    return ReplayedTool()


def _json(value: Any) -> str:
    import orjson

    from tracereplay.sdk.content import json_default

    return orjson.dumps(value, default=json_default).decode()


def _install() -> None:
    from strands.hooks import BeforeToolCallEvent
    from strands.hooks.registry import HookRegistry

    original = HookRegistry.invoke_callbacks_async

    async def invoke_callbacks_async(self: Any, event: Any) -> Any:
        event, interrupts = await original(self, event)
        answer = _answer.get()
        if (
            answer is not None
            and isinstance(event, BeforeToolCallEvent)
            and not interrupts
            and not event.cancel_tool
            and event.selected_tool is not None
        ):
            event.selected_tool = _replay_tool(event.selected_tool, answer)
        return event, interrupts

    HookRegistry.invoke_callbacks_async = invoke_callbacks_async  # type: ignore[method-assign]
    _state["original"] = original


def _uninstall() -> None:
    from strands.hooks.registry import HookRegistry

    HookRegistry.invoke_callbacks_async = _state["original"]  # type: ignore[method-assign]
    _state["original"] = None


_patch = SharedPatch(_install, _uninstall)


class StrandsAgent(FrameworkAgent):
    """A strands ``Agent``."""

    framework: ClassVar[str] = "strands"

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(n.startswith("strands.") and n.endswith(".Agent") for n in mro_names(obj))

    async def arun(self, query: str) -> str:
        # a strands Agent keeps its conversation: each case starts from an empty one (as the
        # recorded run did), one case at a time, and the agent's own history is put back
        import asyncio

        if getattr(self, "_run_lock", None) is None:
            self._run_lock = asyncio.Lock()
        async with self._run_lock:
            saved = self.obj.messages
            self.obj.messages = []
            try:
                result = await self.obj.invoke_async(query)
            finally:
                self.obj.messages = saved
        return str(result).strip()

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)
