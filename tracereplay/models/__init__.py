"""Public data models (pydantic v2)."""

from tracereplay.models.evals import (
    SOURCE_KINDS,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    EvalTurn,
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
    "EvalTurn",
    "EvalSuite",
    "EvaluationResult",
    "LlmCall",
    "Run",
    "ScoreResult",
    "Status",
    "ToolCallRecord",
]
