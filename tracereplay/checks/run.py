"""Checks on the run as a whole: status, budgets (latency, tokens, rounds, LLM calls), JSON."""

from __future__ import annotations

import re
import threading
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field

from tracereplay.checks.batch import BatchVerdicts, SubjectBatch
from tracereplay.checks.common import clip
from tracereplay.checks.kinds import CheckError, Verdict, batch_form, builtin_check
from tracereplay.checks.subject import CheckSubject

NonNegInt = Annotated[int, Field(ge=0)]


@builtin_check("status")
def status(subject: CheckSubject) -> Verdict:
    """The run succeeded (status ``success``, not ``failed`` / ``max_rounds_exceeded``)."""
    st = subject.result.status
    if st == "success":
        return Verdict(True, None, "run succeeded", {"status": st})
    error = subject.run.error if subject.run is not None else None
    why = f": {clip(error, 100)}" if error else ""
    return Verdict(False, None, f"run status is {st}{why}", {"status": st, "error": error})


@batch_form("status")
def _status_batch(batch: SubjectBatch) -> BatchVerdicts:
    """The rows whose run succeeded (the others are left to the scalar check)."""
    statuses = batch.result_status
    passed: list[bool | None] = [True if st == "success" else None for st in statuses]
    return BatchVerdicts(
        passed,
        [1.0] * batch.n,
        ["run succeeded"] * batch.n,
        [{"status": st} for st in statuses],
    )


def _budget(what: str, value: float, limit: float, unit: str = "") -> Verdict:
    passed = value <= limit
    score = 1.0 if passed else (limit / value if value > 0 else 0.0)
    shown = f"{value:g}{unit}"
    return Verdict(
        passed,
        score,
        f"{what} {shown} {'<=' if passed else '>'} limit {limit:g}{unit}",
        {"value": value, "limit": limit},
    )


@builtin_check("maxLatencyMs")
def max_latency_ms(subject: CheckSubject, limit: Annotated[float, Field(ge=0)]) -> Verdict:
    """The run's wall time is at most ``limit`` milliseconds."""
    ms = subject.latency_ms()
    if ms is None:
        raise CheckError("the run's duration is unknown (no run and no measured duration)")
    return _budget("latency", round(ms, 3), limit, " ms")


@builtin_check("maxTokens")
def max_tokens(
    subject: CheckSubject,
    limit: NonNegInt,
    tokens: Literal["total", "input", "output"] = "total",
) -> Verdict:
    """Token usage (``total``, ``input`` or ``output``) is at most ``limit``."""
    usage = subject.token_usage()
    if usage is None:
        raise CheckError("token usage is unknown: the run's LLM calls reported no token counts")
    value = {"total": usage[0] + usage[1], "input": usage[0], "output": usage[1]}[tokens]
    return _budget(f"{tokens} tokens", value, limit)


@builtin_check("maxRounds")
def max_rounds(subject: CheckSubject, limit: NonNegInt) -> Verdict:
    """The agent loop took at most ``limit`` rounds."""
    return _budget("rounds", subject.result.total_rounds, limit)


@builtin_check("maxLlmCalls")
def max_llm_calls(subject: CheckSubject, limit: NonNegInt) -> Verdict:
    """The run made at most ``limit`` LLM calls."""
    return _budget("LLM calls", subject.result.total_llm_calls, limit)


_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\r?\n(.*?)\r?\n?```\s*$", re.DOTALL)


def parse_json_output(text: str, strip_fences: bool) -> tuple[Any, str | None]:
    """``(value, None)`` when ``text`` is JSON (optionally inside one markdown code fence),
    else ``(None, reason)``."""
    if strip_fences:
        m = _FENCE.match(text)
        if m:
            text = m.group(1)
    if not text.strip():
        return None, "response is empty, not JSON"
    try:
        return orjson.loads(text), None
    except orjson.JSONDecodeError as exc:
        return None, f"response is not valid JSON: {exc}"


@builtin_check("jsonValid")
def json_valid(subject: CheckSubject, stripFences: bool = True) -> Verdict:
    """The response parses as JSON (a surrounding markdown code fence is ignored by default)."""
    value, problem = parse_json_output(subject.output, stripFences)
    if problem is not None:
        return Verdict(False, None, problem)
    return Verdict(True, None, f"response is valid JSON ({type(value).__name__})")


_SCHEMAS: dict[int, tuple[dict[str, Any], Any]] = {}
_SCHEMAS_LOCK = threading.Lock()


def _schema_validator(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for ``schema`` (its declared draft, else 2020-12), cached by the
    schema object; an invalid schema raises ``CheckError``."""
    hit = _SCHEMAS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    import jsonschema
    from jsonschema import validators

    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        raise CheckError(f"invalid JSON schema at {where}: {exc.message}") from None
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    with _SCHEMAS_LOCK:
        if len(_SCHEMAS) > 1024:
            _SCHEMAS.clear()
        _SCHEMAS[id(schema)] = (schema, validator)
    return validator


def _validate_schema_option(options: dict[str, Any]) -> None:
    _schema_validator(options["schema"])


@builtin_check("jsonSchema", validate=_validate_schema_option)
def json_schema(subject: CheckSubject, schema: dict[str, Any], stripFences: bool = True) -> Verdict:
    """The response is JSON that validates against ``schema`` (JSON Schema, draft 2020-12
    unless ``$schema`` names another)."""
    validator = _schema_validator(schema)
    value, problem = parse_json_output(subject.output, stripFences)
    if problem is not None:
        return Verdict(False, None, problem)
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return Verdict(True, None, "response matches the JSON schema")
    shown = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {clip(e.message, 100)}"
        for e in errors[:5]
    ]
    return Verdict(
        False,
        None,
        f"{len(errors)} schema violation{'s' if len(errors) != 1 else ''}: " + "; ".join(shown[:2]),
        {"errors": shown},
    )
