"""Scoring one check over many subjects at once (recorded mode's columnar fast path).

A built-in check may register a *batch form* next to its scalar function (``@batch_form``):
``fn(batch: SubjectBatch, **options) -> BatchVerdicts``. It sees the subjects as columns (the
response texts, the expected outputs, the parsed tool calls) and returns one verdict per row, or
``None`` for a row it leaves to the scalar function (e.g. a failure whose explanation takes the
scalar code's work). The scalar function stays the reference: a batch form must give exactly
what the scalar one gives, row by row (a property test holds every batch form to that).

``run_check_batch(spec, batch)`` runs one configured check over a batch and never raises: a
spec that cannot run is an ERROR on every row; a batch form that raises leaves every row to the
scalar function (which turns the problem into the row's ERROR as usual).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracereplay.checks.registry import prepared
from tracereplay.checks.subject import CheckSubject
from tracereplay.models.evals import CheckSpec, ScoreResult, Status
from tracereplay.models.fast import build

#: loads the full ``CheckSubject`` of each row index asked for (for rows scored one by one)
SubjectLoader = Callable[[Sequence[int]], Sequence[CheckSubject]]


@dataclass(slots=True)
class BatchVerdicts:
    """A batch form's answer, one entry per row. ``passed[i] is None``: row ``i`` is left to
    the scalar check (its other entries are ignored). Scores are final floats in 0..1."""

    passed: list[bool | None]
    score: list[float]
    explanation: list[str]
    details: list[dict[str, Any]]


def _parse_list(text: str | None) -> list[Any]:
    return [] if not text or text == "[]" else orjson.loads(text)


class SubjectBatch:
    """Many check subjects as columns. Build one with ``from_subjects`` (any subjects) or from
    stored columns (recorded mode). The JSON columns are parsed on first use, so a batch costs
    only what its checks read.

    Columns: ``expected_output`` (str or None), ``response`` (str), ``result_status`` (the
    result's status), ``expected_tool_calls()`` (per row a list of ``{"name", "arguments"}``),
    ``tool_calls()`` (per row a list of dicts with ``tool_name``, ``arguments``, ...).
    """

    def __init__(
        self,
        *,
        expected_output: list[str | None],
        response: list[str],
        result_status: list[str],
        expected_tool_calls_json: list[str] | None = None,
        tool_calls_json: list[str] | None = None,
        expected_tool_calls: list[list[dict[str, Any]]] | None = None,
        tool_calls: list[list[dict[str, Any]]] | None = None,
        loader: SubjectLoader,
    ) -> None:
        self.n = len(response)
        self.expected_output = expected_output
        self.response = response
        self.result_status = result_status
        self._expected_json = expected_tool_calls_json
        self._calls_json = tool_calls_json
        self._expected = expected_tool_calls
        self._calls = tool_calls
        self._loader = loader
        self._subjects: dict[int, CheckSubject] = {}

    @classmethod
    def from_subjects(cls, subjects: Sequence[CheckSubject]) -> SubjectBatch:
        """A batch of these subjects (the columns read from them)."""
        subjects = list(subjects)
        return cls(
            expected_output=[s.case.expected_output for s in subjects],
            response=[s.result.response for s in subjects],
            result_status=[s.result.status for s in subjects],
            expected_tool_calls=[
                [{"name": e.name, "arguments": e.arguments} for e in s.case.expected_tool_calls]
                for s in subjects
            ],
            tool_calls=[[dict(tc.__dict__) for tc in s.result.tool_calls] for s in subjects],
            loader=lambda rows: [subjects[i] for i in rows],
        )

    def expected_tool_calls(self) -> list[list[dict[str, Any]]]:
        """Per row, the case's expected tool calls as ``{"name", "arguments"}`` dicts."""
        if self._expected is None:
            self._expected = [_parse_list(t) for t in self._expected_json or [""] * self.n]
        return self._expected

    def tool_calls(self) -> list[list[dict[str, Any]]]:
        """Per row, the result's tool calls as dicts (``ToolCallRecord`` fields)."""
        if self._calls is None:
            self._calls = [_parse_list(t) for t in self._calls_json or [""] * self.n]
        return self._calls

    def subjects(self, rows: Sequence[int]) -> list[CheckSubject]:
        """The full subjects of ``rows`` (loaded once, on first request)."""
        todo = [i for i in dict.fromkeys(rows) if i not in self._subjects]
        if todo:
            self._subjects.update(zip(todo, self._loader(todo)))
        return [self._subjects[i] for i in rows]


@dataclass(slots=True)
class CheckColumn:
    """One check's results over a batch, as columns (what ``check_results`` stores)."""

    label: str
    kind: str
    status: list[Status] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    score: list[float | None] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)

    def result(self, i: int) -> ScoreResult:
        """Row ``i`` as a ``ScoreResult``."""
        return build(
            ScoreResult,
            {
                "check": self.label,
                "score": self.score[i],
                "passed": self.passed[i],
                "status": self.status[i],
                "explanation": self.explanation[i],
                "details": self.details[i],
            },
        )


_PASSED, _FAILED, _ERROR = Status.PASSED, Status.FAILED, Status.ERROR


def run_check_batch(spec: CheckSpec, batch: SubjectBatch) -> CheckColumn:
    """Run one configured check over every subject of ``batch``; never raises. Row ``i`` equals
    ``run_check(spec, subject_i)``."""
    prep = prepared(spec)
    n = batch.n
    col = CheckColumn(prep.label, prep.kind)
    if prep.problem is not None:
        col.status = [_ERROR] * n
        col.passed = [False] * n
        col.score = [None] * n
        col.explanation = [prep.problem] * n
        col.details = [{} for _ in range(n)]
        return col
    entry = prep.entry
    assert entry is not None
    verdicts: BatchVerdicts | None = None
    if entry.batch is not None:
        try:
            verdicts = entry.batch(batch, **prep.options)
        except Exception:  # the scalar function reports the problem row by row
            verdicts = None
    if verdicts is None:
        col.status = [_ERROR] * n
        col.passed = [False] * n
        col.score = [None] * n
        col.explanation = [""] * n
        col.details = [{} for _ in range(n)]
        rest = list(range(n))
    else:
        passed = verdicts.passed
        col.passed = passed  # type: ignore[assignment]  # the None rows are filled below
        col.score = verdicts.score  # type: ignore[assignment]
        col.explanation = verdicts.explanation
        col.details = verdicts.details
        col.status = [_PASSED if p else _FAILED for p in passed]
        rest = [i for i, p in enumerate(passed) if p is None]
    if rest:
        for i, subject in zip(rest, batch.subjects(rest)):
            s = prep.run(subject)
            col.status[i] = s.status
            col.passed[i] = s.passed
            col.score[i] = s.score
            col.explanation[i] = s.explanation
            col.details[i] = s.details
    return col
