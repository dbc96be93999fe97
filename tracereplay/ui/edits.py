"""What the pages change, through ``tracereplay.promote`` (the functions ``tracereplay
promote`` and ``tracereplay suite`` use): promote a run (then apply the form's edits to the new
case), bulk promote, edit a case, remove a case.

Form text is parsed here: checks as YAML or JSON (a list of ``{kind, name?, ...options}``),
parameters as ``name=value`` lines, context as document blocks (or plain text), tags separated by
commas, expected tool calls as JSON. Every problem is a one-line ``BadParameterError`` and nothing
is written then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from tracereplay.errors import BadParameterError
from tracereplay.models import CheckSpec, Document, EvalCase, EvalExpectedToolCall
from tracereplay.promote import (
    PromoteOptions,
    parse_documents,
    parse_kind,
    promote_run,
    promote_where,
    remove_cases,
    validate_checks,
)
from tracereplay.promote.promote import BulkPromoteResult, PromoteResult
from tracereplay.promote.suites import build
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store

#: the form's "no change" marker for a field left as the run gave it
KEEP = object()


def parse_checks(text: str) -> list[CheckSpec] | None:
    """Checks from YAML/JSON text; blank text is None (the suite's checks apply)."""
    if not text.strip():
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise BadParameterError(f"checks are not valid YAML/JSON{where}") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise BadParameterError("checks must be a list of mappings, each with a kind")
    specs = [build(CheckSpec, f"checks[{i}]", **d) for i, d in enumerate(data)]
    return validate_checks(specs)


def checks_text(checks: list[CheckSpec] | list[dict[str, Any]] | None) -> str:
    """Checks as the YAML the form shows ('' for None)."""
    if checks is None:
        return ""
    data = [
        suite_store.check_to_dict(c) if isinstance(c, CheckSpec) else c  # type: ignore[arg-type]
        for c in checks
    ]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def parse_parameters(text: str) -> dict[str, str] | None:
    """``name=value`` lines (blank lines ignored); no line is None (no parameters)."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise BadParameterError(f"parameters line {number}: write it as name=value")
        out[name.strip()] = value
    return out or None


def parameters_text(values: dict[str, Any] | None) -> str:
    if not values:
        return ""
    return "\n".join(
        f"{k}={v if isinstance(v, str) else orjson.dumps(v).decode()}" for k, v in values.items()
    )


def parse_context(text: str) -> list[Document]:
    return parse_documents(text.replace("\r\n", "\n"))


def parse_tags(text: str) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def parse_expected_tools(text: str) -> list[EvalExpectedToolCall]:
    if not text.strip():
        return []
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadParameterError(f"expected tool calls are not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise BadParameterError('expected tool calls must be a JSON list of {"name", "arguments"}')
    return [build(EvalExpectedToolCall, f"expected tool calls[{i}]", **d) for i, d in
            enumerate(x if isinstance(x, dict) else {"name": x} for x in data)]  # fmt: skip


@dataclass(frozen=True)
class CaseEdits:
    """Fields to set on a case; ``KEEP`` leaves one as it is."""

    query: Any = KEEP
    expected_output: Any = KEEP
    expected_tool_calls: Any = KEEP
    checks: Any = KEEP
    parameters: Any = KEEP
    context: Any = KEEP
    tags: Any = KEEP

    def changes(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value is KEEP:
                continue
            if name == "context":
                value = [d.to_dict() for d in value]
            elif name == "expected_tool_calls":
                value = [t.to_dict() for t in value]
            elif name == "checks" and value is not None:
                value = [suite_store.check_to_dict(c) for c in value]
            out[name] = value
        return out


def edited(case: EvalCase, edits: CaseEdits) -> EvalCase:
    """The case with the edits applied, validated as a whole."""
    data = case.model_dump(mode="json")
    data.update(edits.changes())
    if isinstance(data.get("query"), str) and not data["query"].strip():
        raise BadParameterError("the query must not be empty")
    return build(EvalCase, "case", **data)


def update_case(store: Store, case_id: str, edits: CaseEdits) -> EvalCase:
    """Write the edits over a stored case (same id and seq), in one transaction, and mark its
    suite as changed (``updated_at``), as a suite import updating that case would."""
    found = suite_store.get_cases(store, [case_id])
    if not found:
        from tracereplay.errors import NotFoundError

        raise NotFoundError(f"no case with id {case_id}")
    new = edited(found[0], edits)
    if new == found[0]:
        return new
    with store.transaction():
        suite_store.delete_cases(store, [new.id])
        suite_store.insert_cases(store, [new])
        suite_store.touch_suite(store, new.suite_id)
    return new


def promote_with_edits(
    store: Store,
    run_id: str,
    *,
    suite_name: str,
    kind: str | None,
    expected_tools: bool,
    edits: CaseEdits,
) -> PromoteResult:
    """``promote_run``, then the form's edits on the new case (a run already in the suite keeps
    its case unchanged, as with ``tracereplay promote``). The edits are checked before anything
    is written."""
    tags = edits.tags if edits.tags is not KEEP else []
    options = PromoteOptions(
        kind=parse_kind(kind) if kind else None,
        expected_output=edits.expected_output if isinstance(edits.expected_output, str) else None,
        expected_tools=expected_tools,
        tags=tuple(tags),
    )
    if not suite_name.strip():
        raise BadParameterError("choose a suite or give the name of a new one")
    result = promote_run(store, run_id, suite_name=suite_name.strip(), options=options)
    if result.created:
        try:
            result.case = update_case(store, result.case.id, edits)
        except BaseException:
            remove_cases(store, [result.case.id])  # all or nothing
            raise
    return result


def bulk_promote(
    store: Store, run_ids: list[str], *, suite_name: str, kind: str | None, tags: list[str]
) -> BulkPromoteResult:
    """``promote_where`` over an explicit list of runs (ids quoted as SQL literals)."""
    if not suite_name.strip():
        raise BadParameterError("give the suite to promote the runs into")
    if not run_ids:
        raise BadParameterError("no run to promote: select runs or filter the table first")
    literal = ", ".join("'" + i.replace("'", "''") + "'" for i in run_ids)
    options = PromoteOptions(kind=parse_kind(kind) if kind else None, tags=tuple(tags))
    return promote_where(
        store, f"run_id IN ({literal})", suite_name=suite_name.strip(), options=options
    )


def delete_case(store: Store, case_id: str) -> tuple[EvalCase, str]:
    return remove_cases(store, [case_id])[0]
