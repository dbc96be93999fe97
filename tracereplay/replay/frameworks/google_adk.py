"""Google ADK: an ADK agent (``LlmAgent`` and the other ``BaseAgent``s) run as ADK runs it, its
tools answered at ADK's tool call.

``arun``: an ``InMemoryRunner`` on the agent, a new session, ``runner.run_async(...)`` with the
query as the user message; the response is the text of the final response event.

``intercept``: every tool ADK runs for an agent of the invocation (the agent, its sub-agents and
transfer targets, ``AgentTool`` agents) is called through ``_call_tool_async(tool, args,
tool_context)`` of ADK's tool caller, after the plugins' and the agent's
``before_tool_callback``s and inside ADK's tool span and error handling. For the replay that
call asks the recording: the value is the tool's result (ADK wraps it into the function
response as it does a real result); a recorded failure is raised right there, so it reaches the
agent's ``on_tool_error_callback`` (or ends the invocation) exactly as the tool's exception did.
A ``before_tool_callback`` answering with the result would answer successes too, but a failure
raised from it would skip ``on_tool_error_callback``, so the tool call itself is the place.

``instrument``: ADK traces through OpenTelemetry's global tracer provider, which is the
replay's; it records tool arguments and messages only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it, so that is set to
``SPAN_AND_EVENT`` during the replay when the environment does not set it (the checks compare
the replay's tool arguments with the recording's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, ClassVar

from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    SharedContext,
    ToolAnswer,
    arun_live,
    ask,
    mro_names,
    wrapt_patch_each,
)

__all__ = ["GoogleAdkAgent"]

_answer: ContextVar[ToolAnswer | None] = ContextVar("tracereplay_google_adk_answer", default=None)
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CALLER_MODULES = (
    "google.adk.flows.llm_flows.tools._caller",
    "google.adk.flows.llm_flows.tools._live_caller",
    "google.adk.flows.llm_flows.functions",
)


async def _call_tool_async(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> object:
    """``_call_tool_async(tool, args, tool_context)``, asking the replay first: a recorded
    failure is raised where the tool raises (the agent's on_tool_error_callback sees it)."""
    tool, tool_args = _tool_and_args(*args, **kwargs)
    asked = ask(_answer, tool.name, lambda: dict(tool_args))
    if asked.live:
        return await arun_live(asked, wrapped, *args, **kwargs)
    return asked.value


def _tool_and_args(tool: Any, args: dict[str, Any], tool_context: Any) -> tuple[Any, Any]:
    return tool, args


def _caller_modules() -> list[Any]:
    """ADK's modules that hold the tool caller's function, its own or imported (the same
    object, found by identity: which modules import it varies between ADK versions)."""
    import importlib

    from google.adk.flows.llm_flows.tools import _caller

    original = _caller._call_tool_async
    modules = []
    for name in _CALLER_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if vars(module).get("_call_tool_async") is original:
            modules.append(module)
    return modules


_patch = wrapt_patch_each(_caller_modules, "_call_tool_async", _call_tool_async)
_content = SharedContext()


@contextlib.contextmanager
def _content_captured() -> Iterator[None]:
    """``CONTENT_ENV`` set to ``SPAN_AND_EVENT`` for the block when the environment does not
    set it."""
    import os

    if CONTENT_ENV in os.environ:
        yield
        return
    os.environ[CONTENT_ENV] = "SPAN_AND_EVENT"
    try:
        yield
    finally:
        os.environ.pop(CONTENT_ENV, None)


class GoogleAdkAgent(FrameworkAgent):
    """A Google ADK agent (any ``google.adk.agents.BaseAgent``)."""

    framework: ClassVar[str] = "google-adk"
    distribution: ClassVar[str] = "google-adk"
    tested: ClassVar[tuple[str, ...]] = ("==2.13.*",)
    conversion_forms: ClassVar[tuple[str, ...]] = ("google_adk",)

    @classmethod
    def accepts(cls, obj: Any) -> bool:
        return any(n.startswith("google.adk.") and n.endswith(".BaseAgent") for n in mro_names(obj))

    async def arun(self, query: str) -> str:
        from google.adk.runners import InMemoryRunner
        from google.genai import types

        runner = InMemoryRunner(agent=self.obj, app_name="tracereplay")
        try:
            session = await runner.session_service.create_session(
                app_name="tracereplay", user_id="tracereplay"
            )
            message = types.Content(role="user", parts=[types.Part(text=query)])
            final = ""
            async for event in runner.run_async(
                user_id="tracereplay", session_id=session.id, new_message=message
            ):
                if event.is_final_response() and event.content and event.content.parts:
                    final = "".join(p.text or "" for p in event.content.parts)
            return final
        finally:
            await runner.close()

    def instrument(self, tracer_provider: Any) -> contextlib.AbstractContextManager[None]:
        return _content.use(_content_captured)

    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        return _patch.answering(_answer, answer)
