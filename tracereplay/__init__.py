"""tracereplay: turn what production LLM agents did into regression tests.

Public API: the data models (``AgentResult``, ``ToolCallRecord``, ``Run``, ``EvalCase``,
``EvalSuite``, ``ScoreResult`` ...).
"""

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

__version__ = "0.1.0"

__all__ = [
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
