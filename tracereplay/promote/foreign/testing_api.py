"""testing-api TestSets (and a MetricConfiguration) as tracereplay suites.

A TestSet ``{"id", "name", "version", "cases": [{"caseId", "input", "expectedOutput",
"metadata"}]}`` becomes the suite ``name`` (``id`` and ``version`` kept in its metadata under
``testing_api``), one case per TestCase:

- the query is the first text field of ``input`` among ``QUERY_FIELDS`` (``input`` may also be
  a plain string); the whole ``input`` object is kept as the case's parameters (values that are
  not strings as compact JSON), so an agent taking ``parameters`` sees every field;
- ``expectedOutput`` is the expected output (a value that is not a string as compact JSON);
- ``metadata`` is the case's metadata, plus ``testing_api.caseId``; the case id is derived from
  the suite name and the ``caseId`` (a UUID ``caseId`` is used as it is), so importing the file
  again updates the same cases.

The MetricConfiguration ``{"metricType", "threshold", "caseSensitive"}`` becomes the suite's one
check, passing at ``score >= threshold`` (``caseSensitive`` false by default): ``EXACT_MATCH`` ->
``exact`` (trimmed, case-folded unless case-sensitive; scores 0 or 1), ``FUZZY_MATCH`` ->
``fuzzy`` (rapidfuzz ratio), ``COSINE_SIMILARITY`` -> ``similarity`` (``backend`` from the
metric's optional ``backend`` field, ``embedding`` by default). Without one: ``EXACT_MATCH``
at threshold 1.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from tracereplay.models import CheckSpec, EvalCase, EvalSuite
from tracereplay.promote.foreign import (
    ForeignSuite,
    Path_,
    as_text,
    as_uuid,
    derived_id,
    one_line_name,
)
from tracereplay.promote.suite_file import (
    ParsedCase,
    ParsedSuite,
    Problem,
    unknown_fields,
    validation_message,
)

META = "testing_api"
#: the fields of a TestCase's ``input`` object the query is read from, first found wins
QUERY_FIELDS = ("text", "prompt", "query", "question", "input", "message", "content")
METRIC_TYPES = ("EXACT_MATCH", "FUZZY_MATCH", "COSINE_SIMILARITY")
_SET_KEYS = ("id", "name", "version", "cases")
_CASE_KEYS = ("caseId", "input", "expectedOutput", "metadata")
_METRIC_KEYS = ("metricType", "threshold", "caseSensitive", "backend")


def convert(
    data: dict[str, Any],
    name: str | None,
    metric: Any,
    metric_source: str,
    problems: list[Problem],
) -> ForeignSuite | None:
    unknown_fields(data, _SET_KEYS, (), problems)
    set_name = name or data.get("name")
    if not isinstance(set_name, str) or not set_name.strip():
        problems.append(Problem(("name",), "missing (required): the TestSet's name"))
        return None
    meta: dict[str, Any] = {}
    for key in ("id", "version"):
        if key in data:
            if not isinstance(data[key], (str, int, float)) or isinstance(data[key], bool):
                problems.append(Problem((key,), "must be a string"))
            else:
                meta[key] = str(data[key])
    check = metric_check(metric, metric_source, problems)
    try:
        suite = EvalSuite(
            name=one_line_name(set_name),
            checks=[check] if check is not None else [],
            metadata={META: meta},
        )
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem(("name",), validation_message(err)))
        return None
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list):
        problems.append(Problem(("cases",), "must be a list of TestCases"))
        return None
    cases: list[ParsedCase] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_cases):
        parsed = _case(raw, index, suite, problems)
        if parsed is None:
            continue
        case_id = parsed.case.metadata[META]["caseId"]
        if case_id in seen:
            problems.append(
                Problem(
                    ("cases", index, "caseId"),
                    f"{case_id!r} is also the caseId of cases[{seen[case_id]}]",
                )
            )
        seen.setdefault(case_id, index)
        cases.append(parsed)
    if problems:
        return None
    parsed_suite = ParsedSuite(
        suite=suite, cases=cases, id_given=False, created_at_given=False, updated_at_given=False
    )
    return ForeignSuite(parsed_suite, "testing-api")


def metric_check(metric: Any, source: str, problems: list[Problem]) -> CheckSpec | None:
    """The check a MetricConfiguration stands for (``None`` when it has problems)."""
    if metric is None:
        return CheckSpec(kind="exact", normalize=["strip", "case"])
    if not isinstance(metric, dict):
        problems.append(Problem(("metric",), f"{source}: a MetricConfiguration must be an object"))
        return None
    found: list[str] = []
    for key in metric:
        if key not in _METRIC_KEYS:
            found.append(f"{key}: unknown field (known: {', '.join(_METRIC_KEYS)})")
    kind = metric.get("metricType")
    if kind not in METRIC_TYPES:
        found.append(f"metricType: must be one of {', '.join(METRIC_TYPES)}, not {kind!r}")
    threshold = metric.get("threshold", 1.0)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        found.append("threshold: must be a number from 0 to 1")
    elif not 0.0 <= threshold <= 1.0 or (kind == "EXACT_MATCH" and threshold <= 0.0):
        found.append(
            "threshold: must be above 0 and at most 1 for EXACT_MATCH (it scores 0 or 1)"
            if kind == "EXACT_MATCH"
            else "threshold: must be a number from 0 to 1"
        )
    case_sensitive = metric.get("caseSensitive", False)
    if not isinstance(case_sensitive, bool):
        found.append("caseSensitive: must be true or false")
    backend = metric.get("backend", "embedding")
    if backend not in ("embedding", "tfidf"):
        found.append(f"backend: must be embedding or tfidf, not {backend!r}")
    if found:
        problems.extend(Problem(("metric",), f"{source}: {message}") for message in found)
        return None
    if kind == "EXACT_MATCH":
        return CheckSpec(kind="exact", normalize=["strip"] if case_sensitive else ["strip", "case"])
    if kind == "FUZZY_MATCH":
        return CheckSpec(kind="fuzzy", threshold=float(threshold), caseSensitive=case_sensitive)
    return CheckSpec(kind="similarity", threshold=float(threshold), backend=backend)


def query_of(value: Any) -> str | None:
    """The query text of a TestCase's ``input``: itself when a string, else its first
    non-blank string field among ``QUERY_FIELDS``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in QUERY_FIELDS:
            text = value.get(key)
            if isinstance(text, str) and text.strip():
                return text
    return None


def _case(raw: Any, index: int, suite: EvalSuite, problems: list[Problem]) -> ParsedCase | None:
    path: Path_ = ("cases", index)
    if not isinstance(raw, dict):
        problems.append(Problem(path, "a TestCase must be an object with 'caseId' and 'input'"))
        return None
    before = len(problems)
    unknown_fields(raw, _CASE_KEYS, path, problems)
    case_id = raw.get("caseId")
    if not isinstance(case_id, (str, int)) or isinstance(case_id, bool) or str(case_id) == "":
        problems.append(Problem((*path, "caseId"), "missing (required): a string"))
    value = raw.get("input")
    query = query_of(value)
    if query is None:
        problems.append(
            Problem(
                (*path, "input"),
                "needs a text field for the query (one of: " + ", ".join(QUERY_FIELDS) + ")",
            )
        )
    metadata = raw.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        problems.append(Problem((*path, "metadata"), "must be an object"))
    if len(problems) > before:
        return None
    case_key = str(case_id)
    expected = raw.get("expectedOutput")
    parameters = {str(k): as_text(v) for k, v in value.items()} if isinstance(value, dict) else None
    uid = as_uuid(case_key) or derived_id("testing-api", suite.name, case_key)
    try:
        case = EvalCase(
            id=uid,
            suite_id=suite.id,
            seq=index,
            query=query,
            expected_output=None if expected is None else as_text(expected),
            parameters=parameters,
            metadata={**metadata, META: {"caseId": case_key}},
        )
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem((*path, "input"), validation_message(err)))
        return None
    return ParsedCase(case, id_given=True, seq_given=True, path=path)
