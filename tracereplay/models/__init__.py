"""Public data models (pydantic v2)."""

from tracereplay.models.evals import (
    SOURCE_KINDS,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    EvaluationResult,
    ScoreResult,
    Status,
)
from tracereplay.models.run import (
    RUN_STATUSES,
    AgentResult,
    Document,
    LlmCall,
    Run,
    ToolCallRecord,
)

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
]
