"""Test-case vocabulary: suites, cases, check results (Tracon / Supervised AI / AgenticAssure)."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tracereplay.models.run import Document, _Record

SourceKind = Literal["failed_run", "negative_score", "reference_run"]
SOURCE_KINDS: tuple[str, ...] = ("failed_run", "negative_score", "reference_run")

_CHECK_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PARAMETER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
#: the roles of a case's history messages
HISTORY_ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


def _uuid(value: str) -> str:
    """The canonical (lower-case, hyphenated) form of a UUID string; ValueError otherwise.
    A string already canonical is returned as it is (one regex, not a UUID built and printed:
    a 10,000-case suite file checks 20,000 of them)."""
    if value.__class__ is str and _CANONICAL_UUID.fullmatch(value):
        return value
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise ValueError(f"not a UUID: {value!r}") from None


class EvalExpectedToolCall(_Record):
    """A tool call a case expects: by name, and optionally by a subset of its arguments."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None


class CheckSpec(BaseModel):
    """One configured check: its ``kind`` plus that kind's options (kept as extra fields)."""

    model_config = ConfigDict(extra="allow")

    kind: str
    name: str | None = Field(default=None, description="label in results; defaults to kind")

    @field_validator("kind")
    @classmethod
    def _kind_is_a_name(cls, value: str) -> str:
        if not _CHECK_KIND.match(value):
            raise ValueError(f"check kind must be a name like 'containsExpected', not {value!r}")
        return value

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("check name must not be blank (leave it out to use the kind)")
        return value

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @property
    def label(self) -> str:
        return self.name or self.kind


class EvalSuite(_Record):
    """A named collection of cases for one agent, with the checks every case is scored by."""

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    name: str
    description: str = ""
    agent_name: str = ""
    checks: list[CheckSpec] = Field(default_factory=list)
    required_parameters: list[str] = Field(
        default_factory=list,
        description="parameter names every case must give a value for ({{name}} in the agent)",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @field_validator("id")
    @classmethod
    def _canonical_id(cls, value: str) -> str:
        return _uuid(value)

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip() or value != value.strip() or "\n" in value:
            raise ValueError("suite name must be one non-blank line without surrounding spaces")
        return value

    @field_validator("required_parameters")
    @classmethod
    def _parameter_names(cls, value: list[str]) -> list[str]:
        bad = [n for n in value if not _PARAMETER_NAME.match(n)]
        if bad:
            raise ValueError(f"not a parameter name: {bad[0]!r} (letters, digits, _ . -)")
        if len(set(value)) != len(value):
            raise ValueError("a parameter name is listed twice")
        return value


class EvalTurn(_Record):
    """One user turn of a multi-turn case (``promote --session``): the question, the answer the
    conversation went on from (given to the later turns as history under ``--history
    recorded``), what the turn is expected to do, and the run it was recorded in (its tool and
    LLM calls answer the turn's replay)."""

    query: str
    response: str = Field(default="", description="the recorded answer")
    expected_output: str | None = None
    expected_tool_calls: list[EvalExpectedToolCall] = Field(default_factory=list)
    source_run_id: str | None = None

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a turn's query must not be empty")
        return value


class EvalCase(_Record):
    """A single test case inside an ``EvalSuite``: one question, or with ``turns`` a whole
    conversation replayed turn by turn."""

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    suite_id: str
    seq: int = Field(ge=0, description="0-based position within the suite")
    query: str
    #: the conversation before ``query``, oldest first: ``{"role", "content"}`` messages (a
    #: promoted turn's earlier turns); empty for a one-question case
    history: list[dict[str, str]] = Field(default_factory=list)
    #: a multi-turn case: the user's turns in order, turn 1 first (``query`` is turn 1's
    #: question); empty for a one-question case
    turns: list[EvalTurn] = Field(default_factory=list)
    context: list[Document] = Field(default_factory=list)
    expected_output: str | None = None
    expected_tool_calls: list[EvalExpectedToolCall] = Field(default_factory=list)
    parameters: dict[str, str] | None = None
    promoted_at: datetime | None = None
    source_kind: SourceKind | None = None
    source_run_id: str | None = None
    checks: list[CheckSpec] | None = Field(
        default=None, description="overrides the suite's checks for this case when set"
    )
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "suite_id")
    @classmethod
    def _canonical_ids(cls, value: str) -> str:
        return _uuid(value)

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be empty")
        return value

    @model_validator(mode="before")
    @classmethod
    def _query_of_turn_one(cls, data: Any) -> Any:
        """A multi-turn case written without ``query`` takes turn 1's."""
        if isinstance(data, dict) and data.get("turns") and not data.get("query"):
            first = data["turns"][0]
            query = first.get("query") if isinstance(first, dict) else getattr(first, "query", None)
            if query:
                data = {**data, "query": query}
        return data

    @model_validator(mode="after")
    def _turns_start_at_query(self) -> EvalCase:
        if self.turns:
            if len(self.turns) < 2:
                raise ValueError("a multi-turn case needs at least 2 turns (one is a query)")
            if self.turns[0].query != self.query:
                raise ValueError("query must be turn 1's question (turns[0].query)")
        return self

    @field_validator("history")
    @classmethod
    def _history_messages(cls, value: list[dict[str, str]]) -> list[dict[str, str]]:
        for i, message in enumerate(value):
            if set(message) != {"role", "content"}:
                raise ValueError(f"message {i} must have exactly 'role' and 'content'")
            if message["role"] not in HISTORY_ROLES:
                raise ValueError(
                    f"message {i}: role must be one of {', '.join(HISTORY_ROLES)},"
                    f" not '{message['role']}'"
                )
        return value


class Status(str, Enum):
    """Outcome of a check or a case."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"


class ScoreResult(_Record):
    """What one check says about one case: a 0..1 score, pass/fail, and why.

    ``status`` is ERROR when the check could not run (bad option, unparseable judge reply);
    then ``passed`` is False and ``score`` is None rather than a misleading 0.
    """

    check: str
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    passed: bool = False
    status: Status = Status.FAILED
    explanation: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


class EvaluationResult(_Record):
    """Result of one case in an eval run: PASSED / FAILED / ERROR, score = mean of its checks."""

    case_id: str
    status: Status
    score: float | None = None
    reason: str = ""
    checks: list[ScoreResult] = Field(default_factory=list)
    duration_ms: float = 0.0
    run_id: str | None = None
