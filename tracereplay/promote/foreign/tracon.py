"""A JSON list of Tracon ``EvalCase`` objects as the cases of one suite.

Each object's fields (camelCase as Tracon's JSON writes them, PascalCase read too): ``id``,
``suiteId``, ``seq``, ``query``, ``context`` (plain text, or document blocks: one document per
``-----BEGIN TRACON DOCUMENT-----`` block), ``expectedOutput``, ``expectedToolCalls``
(``name``, optional ``arguments``), ``parameters``, ``promotedAt``, ``sourceKind``
(``FailedRun`` / ``NegativeScore`` / ``ReferenceRun``, any case or with underscores) and
``sourceRunId``. Every one is kept. The cases must share one ``suiteId`` (which becomes the
suite's id); the suite is named by ``--name``, else after the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tracereplay.models import EvalCase, EvalSuite
from tracereplay.models.evals import SOURCE_KINDS
from tracereplay.promote.checks import default_checks
from tracereplay.promote.documents import DocumentFormatError, parse_documents
from tracereplay.promote.foreign import ForeignSuite, as_uuid, one_line_name
from tracereplay.promote.suite_file import ParsedCase, ParsedSuite, Problem, validation_message

#: Tracon field (lower-cased) -> EvalCase field
FIELDS = {
    "id": "id",
    "suiteid": "suite_id",
    "seq": "seq",
    "query": "query",
    "context": "context",
    "expectedoutput": "expected_output",
    "expectedtoolcalls": "expected_tool_calls",
    "parameters": "parameters",
    "promotedat": "promoted_at",
    "sourcekind": "source_kind",
    "sourcerunid": "source_run_id",
}
_KINDS = {k.replace("_", ""): k for k in SOURCE_KINDS}


def convert(
    data: list[Any], source: str, name: str | None, problems: list[Problem]
) -> ForeignSuite | None:
    suite_ids: set[str] = set()
    rows: list[tuple[int, dict[str, Any]]] = []
    for index, raw in enumerate(data):
        row = _fields(raw, index, problems)
        if row is None:
            continue
        if row.get("suite_id") is not None:
            sid = as_uuid(row["suite_id"])
            if sid is None:
                problems.append(Problem((index, "suiteId"), "must be a UUID"))
            else:
                suite_ids.add(sid)
        rows.append((index, row))
    if len(suite_ids) > 1:
        problems.append(
            Problem(
                (), f"the cases belong to {len(suite_ids)} suites (suiteId): import one at a time"
            )
        )
    suite_name = name or (Path(source).stem if source not in ("-", "<stdin>") else "tracon")
    try:
        suite = EvalSuite(
            **({"id": next(iter(suite_ids))} if len(suite_ids) == 1 else {}),
            name=one_line_name(suite_name),
            checks=default_checks(),
        )
    except ValidationError as exc:
        problems.extend(Problem(("name",), validation_message(e)) for e in exc.errors())
        return None
    cases: list[ParsedCase] = []
    for index, row in rows:
        parsed = _case(row, index, suite, problems)
        if parsed is not None:
            cases.append(parsed)
    if problems:
        return None
    parsed_suite = ParsedSuite(
        suite=suite,
        cases=cases,
        id_given=len(suite_ids) == 1,
        created_at_given=False,
        updated_at_given=False,
    )
    return ForeignSuite(parsed_suite, "tracon")


def _fields(raw: Any, index: int, problems: list[Problem]) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        problems.append(Problem((index,), "an EvalCase must be an object with a 'query'"))
        return None
    row: dict[str, Any] = {}
    for key, value in raw.items():
        target = FIELDS.get(key.lower())
        if target is None:
            problems.append(
                Problem((index, key), "unknown field (known: " + ", ".join(_camel()) + ")")
            )
        elif target in row:
            problems.append(Problem((index, key), "this field is given twice"))
        else:
            row[target] = value
    return row


def _camel() -> list[str]:
    return [
        "id", "suiteId", "seq", "query", "context", "expectedOutput", "expectedToolCalls",
        "parameters", "promotedAt", "sourceKind", "sourceRunId",
    ]  # fmt: skip


def _case(
    row: dict[str, Any], index: int, suite: EvalSuite, problems: list[Problem]
) -> ParsedCase | None:
    data = dict(row)
    data.pop("suite_id", None)
    before = len(problems)
    context = data.get("context")
    if context is None:
        data.pop("context", None)
    elif isinstance(context, str):
        try:
            data["context"] = [d.to_dict() for d in parse_documents(context)]
        except DocumentFormatError as exc:
            problems.append(Problem((index, "context"), str(exc)))
    else:
        problems.append(Problem((index, "context"), "must be text (or document blocks)"))
    kind = data.get("source_kind")
    if kind is not None:
        key = str(kind).replace("_", "").lower()
        if key not in _KINDS:
            problems.append(
                Problem((index, "sourceKind"), "must be FailedRun, NegativeScore or ReferenceRun")
            )
        else:
            data["source_kind"] = _KINDS[key]
    calls = data.get("expected_tool_calls")
    if calls is None:
        data.pop("expected_tool_calls", None)
    elif isinstance(calls, list):
        data["expected_tool_calls"] = [
            {k[:1].lower() + k[1:]: v for k, v in c.items()} if isinstance(c, dict) else c
            for c in calls
        ]
    if len(problems) > before:
        return None
    id_given = "id" in data and data["id"] is not None
    seq_given = "seq" in data and data["seq"] is not None
    if not id_given:
        data.pop("id", None)
    data["seq"] = data.get("seq") if seq_given else 0
    try:
        case = EvalCase(**data, suite_id=suite.id)
    except (ValidationError, TypeError) as exc:
        if isinstance(exc, TypeError):
            problems.append(Problem((index,), str(exc)))
            return None
        names = dict(zip(FIELDS.values(), _camel()))
        for err in exc.errors():
            loc = tuple(names.get(p, p) if isinstance(p, str) else p for p in err["loc"])
            problems.append(Problem((index, *loc), validation_message(err)))
        return None
    return ParsedCase(case, id_given=id_given, seq_given=seq_given, path=(index,))
