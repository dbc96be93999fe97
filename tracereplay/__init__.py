"""tracereplay: turn what production LLM agents did into regression tests.

Public API: the data models (``AgentResult``, ``ToolCallRecord``, ``Run``, ``EvalCase``,
``EvalSuite``, ``ScoreResult`` ...) and the SDK for live agents (``configure``, ``agent_run``,
``tool``, ``flush``; see ``tracereplay.sdk``).
"""

from tracereplay.evaluate.checks.registry import Verdict, check
from tracereplay.evaluate.subject import CheckSubject
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
from tracereplay.sdk import (
    AgentRunHandle,
    LlmCallHandle,
    agent_run,
    configure,
    flush,
    tool,
)

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
