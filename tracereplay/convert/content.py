"""Runs whose instrumentation recorded no content, and what records it.

Some instrumentations trace an agent's structure but none of what was said: AutoGen's own spans
(agents and tools by name, nothing else), Microsoft Agent Framework without sensitive data, the
GenAI contrib instrumentations without message capture. Such a run converts with an empty
question and answer and tool calls without arguments or results; ``ingest`` and ``show`` say so
once instead of showing it silently empty, and name the setting or instrumentation that
records it (``content_setting``: known instrumentations by their scope, else a general hint).

That note is only true when the spans hold no content. A run can also come out empty because
its spans hold content in attributes the converter does not read (a telemetry form it has
never seen): ``unread_content`` finds such spans, and the note then says it is a conversion
gap, with the span names, not a setting to change (``conversion_gap_note``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracereplay.models.run import Run
from tracereplay.spans import Span

__all__ = [
    "content_setting",
    "conversion_gap_note",
    "no_content_note",
    "records_no_content",
    "unread_content",
]

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


#: the last part of an attribute key that names something said (``input.value``,
#: ``gen_ai.input.messages``, ``ai.prompt``, ``ai.response.text``, ``ai.toolCall.args``,
#: ``llm.input_messages.0.message.content``), compared in lower case
_CONTENT_KEYS = frozenset(
    (
        "prompt",
        "prompts",
        "messages",
        "message",
        "input",
        "output",
        "content",
        "contents",
        "completion",
        "text",
        "result",
        "response",
        "args",
        "arguments",
        "query",
        "question",
        "answer",
        "value",
        "toolcalls",
        "tool_calls",
        "parts",
        "body",
    )
)


def _holds_text(key: str, value: Any) -> bool:
    if type(value) is not str or not value.strip():
        return False
    return key.rsplit(".", 1)[-1].lower() in _CONTENT_KEYS


def unread_content(spans: Iterable[Span]) -> list[str]:
    """The names of the spans (first seen order, each once) holding text under an attribute
    or event attribute whose key names content (``_CONTENT_KEYS``): for runs that came out
    with none, that content is there but was not read."""
    names: list[str] = []
    for span in spans:
        found = any(_holds_text(k, v) for k, v in span.attributes.items())
        if not found:
            for event in span.events:
                attrs = event.get("attributes")
                if isinstance(attrs, dict) and any(_holds_text(k, v) for k, v in attrs.items()):
                    found = True
                    break
        if found and span.name not in names:
            names.append(span.name)
    return names


def conversion_gap_note(runs: int, span_names: list[str]) -> str:
    """The one line for ``runs`` runs that came out empty though their spans hold content."""
    which = "this run came" if runs == 1 else f"{runs} runs came"
    shown = ", ".join(span_names[:5]) + (", ..." if len(span_names) > 5 else "")
    return (
        f"{which} out without content, but their spans hold some that tracereplay does not "
        f"read ({shown}): a conversion gap, not a setting to change; the spans are in the store "
        "(table spans) to report it with"
    )
