"""Runs whose instrumentation recorded no content, and what records it.

Some instrumentations trace an agent's structure but none of what was said: AutoGen's own spans
(agents and tools by name, nothing else), Microsoft Agent Framework without sensitive data, the
GenAI contrib instrumentations without message capture. Such a run converts with an empty
question and answer and tool calls without arguments or results; ``ingest`` and ``show`` say so
once instead of showing it silently empty, and name the setting or instrumentation that
records it (``content_setting``: known instrumentations by their scope, else a general hint).
"""

from __future__ import annotations

from collections.abc import Iterable

from tracereplay.models.run import Run

__all__ = ["content_setting", "no_content_note", "records_no_content"]

#: (scope name prefix, what records the content) for instrumentations known to record none by
#: default; the first prefix that matches one of the run's scopes wins
_SETTINGS: tuple[tuple[str, str], ...] = (
    (
        "autogen",
        "AutoGen's own spans record none: add OpenLLMetry's OpenAI instrumentation "
        "(pip install opentelemetry-instrumentation-openai; OpenAIInstrumentor().instrument()), "
        "as AutoGen's tracing guide does",
    ),
    (
        "agent_framework",
        "Agent Framework records it with sensitive data on: "
        "enable_instrumentation(enable_sensitive_data=True) or ENABLE_SENSITIVE_DATA=true",
    ),
    (
        "opentelemetry.instrumentation.",
        "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true for the GenAI "
        "instrumentations (TRACELOOP_TRACE_CONTENT=true for OpenLLMetry's)",
    ),
)

_GENERAL = "turn on the instrumentation's content (message) capture"


def records_no_content(run: Run) -> bool:
    """Whether ``run`` holds nothing that was said: no question, no answer, no tool argument or
    result, no LLM message (an agent and tool names only)."""
    if run.query or run.result.response or run.context:
        return False
    if any(c.arguments or c.result for c in run.result.tool_calls):
        return False
    return not any(c.input_messages or c.output_messages for c in run.llm_calls)


def content_setting(scopes: Iterable[str]) -> str:
    """What records the content for a run traced by instrumentation ``scopes``."""
    names = [s for s in scopes if s]
    for prefix, setting in _SETTINGS:
        if any(name.startswith(prefix) for name in names):
            return setting
    return _GENERAL


def no_content_note(runs: int, scopes: Iterable[str]) -> str:
    """The one line ``ingest`` and ``show`` print for ``runs`` runs recorded without content."""
    which = "this run was" if runs == 1 else f"{runs} runs were"
    return (
        f"{which} recorded without content (no question, answer, tool arguments or results): "
        f"{content_setting(scopes)}"
    )
