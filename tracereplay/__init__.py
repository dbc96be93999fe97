"""tracereplay: turn what production LLM agents did into regression tests.

Public API: the data models (``AgentResult``, ``ToolCallRecord``, ``Run``, ``EvalCase``,
``EvalSuite``, ``ScoreResult`` ...) and the SDK for live agents (``configure``, ``agent_run``,
``tool``, ``flush``; see ``tracereplay.sdk``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr

if TYPE_CHECKING:
    from tracereplay.checks.registry import Verdict, check
    from tracereplay.checks.subject import CheckSubject
    from tracereplay.models import (
        RUN_STATUSES,
        SOURCE_KINDS,
        AgentResult,
        CheckSpec,
        Document,
        EvalCase,
        EvalExpectedToolCall,
        EvalSuite,
        EvaluationResult,
        LlmCall,
        Run,
        ScoreResult,
        Status,
        ToolCallRecord,
    )
    from tracereplay.sdk import AgentRunHandle, LlmCallHandle, agent_run, configure, flush, tool

# Everything loads on first use: the models (pydantic), the SDK (OpenTelemetry)
# and the checks (rapidfuzz, jsonschema). So importing the package costs nothing by itself: the
# pytest plugin is imported by every pytest run of a project that has tracereplay installed,
# an agent that only records does not pay for the checks, a command that only reads not for
# the SDK.
_MODELS = (
    "RUN_STATUSES", "SOURCE_KINDS", "AgentResult", "CheckSpec", "Document", "EvalCase",
    "EvalExpectedToolCall", "EvalSuite", "EvaluationResult", "LlmCall", "Run", "ScoreResult",
    "Status", "ToolCallRecord",
)  # fmt: skip
_LAZY = {
    **dict.fromkeys(_MODELS, "tracereplay.models"),
    "check": "tracereplay.checks.registry",
    "Verdict": "tracereplay.checks.registry",
    "CheckSubject": "tracereplay.checks.subject",
    "AgentRunHandle": "tracereplay.sdk",
    "LlmCallHandle": "tracereplay.sdk",
    "agent_run": "tracereplay.sdk",
    "configure": "tracereplay.sdk",
    "flush": "tracereplay.sdk",
    "tool": "tracereplay.sdk",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__version__ = "0.1.0"

__all__ = [
    "AgentRunHandle",
    "CheckSubject",
    "LlmCallHandle",
    "Verdict",
    "check",
    "agent_run",
    "configure",
    "flush",
    "tool",
    "RUN_STATUSES",
    "SOURCE_KINDS",
    "AgentResult",
    "CheckSpec",
    "Document",
    "EvalCase",
    "EvalExpectedToolCall",
    "EvalSuite",
    "EvaluationResult",
    "LlmCall",
    "Run",
    "ScoreResult",
    "Status",
    "ToolCallRecord",
    "__version__",
]
