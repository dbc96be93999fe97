"""tracereplay: turn what production LLM agents did into regression tests.

Public API: the data models (``AgentResult``, ``ToolCallRecord``, ``Run``, ``EvalCase``,
``EvalSuite``, ``ScoreResult`` ...) and the SDK for live agents (``configure``, ``agent_run``,
``tool``, ``flush``; see ``tracereplay.sdk``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr
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

if TYPE_CHECKING:
    from tracereplay.checks.registry import Verdict, check
    from tracereplay.checks.subject import CheckSubject
    from tracereplay.sdk import AgentRunHandle, LlmCallHandle, agent_run, configure, flush, tool

# The SDK (OpenTelemetry) and the checks (rapidfuzz, jsonschema) load on first use, so neither
# an agent that only records nor a CLI command that only reads pays for the other.
_LAZY = {
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
