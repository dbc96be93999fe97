"""Files of other tools that ``tracereplay suite import`` reads as they are.

- an AgenticAssure suite (``scenarios``, optional ``suite``): ``agenticassure``
- a testing-api TestSet (``id``, ``name``, ``version``, ``cases`` of ``caseId``): ``testing_api``
- a JSON list of Tracon ``EvalCase`` objects: ``tracon``
- a JSON list of ffai ``AgentResult`` objects with their queries: ``ffai`` (runs, not a suite)

``detect`` names the format of parsed data (``None``: a tracereplay suite file); ``load_foreign``
converts it, every problem found reported at once as a ``SuiteFileError`` (nothing changed).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from tracereplay.models import Run
from tracereplay.promote.suite_file import FileFormat, ParsedSuite, Problem, SuiteFileError

Foreign = Literal["agenticassure", "testing-api", "tracon", "ffai"]
Path_ = tuple[int | str, ...]
Locate = Callable[[Path_], "int | None"]

#: namespace of the case and run ids derived from another tool's identifiers
NAMESPACE = uuid.UUID("5b0e6a8e-9d1f-4c55-8f0e-2f6a1d3c7b41")

_TRACON_KEYS = frozenset({"query", "seq", "suiteid", "expectedoutput", "expectedtoolcalls"})
_FFAI_KEYS = frozenset({"response", "tool_calls", "total_rounds", "total_llm_calls"})


@dataclass
class ImportedRuns:
    """A list of ffai AgentResults read as runs of kind ``imported``."""

    runs: list[Run]
    notes: list[str] = field(default_factory=list)


@dataclass
class ForeignSuite:
    """Another tool's suite read as a tracereplay suite, with notes for the user."""

    parsed: ParsedSuite
    format: Foreign
    notes: list[str] = field(default_factory=list)


def might_be_foreign(text: str) -> bool:
    """A cheap look at the text: could it be another tool's file? (A tracereplay suite file is
    read straight away when not.)"""
    head = text.lstrip()[:1]
    if head == "[":
        return True
    return "scenarios" in text or "caseId" in text


def detect(data: Any) -> Foreign | None:
    """The format of parsed data, or ``None`` for what is not another tool's file."""
    if isinstance(data, dict):
        if "format" in data:
            return None
        if "scenarios" in data and "cases" not in data:
            return "agenticassure"
        cases = data.get("cases")
        if isinstance(cases, list) and any(isinstance(c, dict) and "caseId" in c for c in cases):
            return "testing-api"
        return None
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        keys = {k.lower() for x in data for k in x}
        if "query" in keys and keys & _FFAI_KEYS and not keys & {"seq", "suiteid"}:
            return "ffai"
        if "query" in keys and keys & _TRACON_KEYS - {"query"}:
            return "tracon"
        if "query" in keys and ("result" in keys or "agent_result" in keys):
            return "ffai"
        if "query" in keys:
            return "tracon"
    return None


def load_foreign(
    kind: Foreign,
    data: Any,
    source: str,
    locate: Locate,
    *,
    name: str | None = None,
    metric: Any = None,
    metric_source: str = "<metric>",
) -> ForeignSuite | ImportedRuns:
    """Convert parsed data of format ``kind``; ``SuiteFileError`` lists every problem."""
    problems: list[Problem] = []
    out: ForeignSuite | ImportedRuns | None
    if kind == "agenticassure":
        from tracereplay.promote.foreign import agenticassure

        out = agenticassure.convert(data, source, name, problems)
    elif kind == "testing-api":
        from tracereplay.promote.foreign import testing_api

        out = testing_api.convert(data, name, metric, metric_source, problems)
    elif kind == "tracon":
        from tracereplay.promote.foreign import tracon

        out = tracon.convert(data, source, name, problems)
    else:
        from tracereplay.promote.foreign import ffai

        out = ffai.convert(data, problems)
    if isinstance(out, ForeignSuite):
        problems.extend(unique_problems(out.parsed))
    if problems or out is None:
        placed = [Problem(p.path, p.message, p.line or locate(p.path)) for p in problems]
        raise SuiteFileError(source, placed or [Problem((), "nothing to import")])
    if isinstance(out, ForeignSuite):
        out.parsed.locate = locate
    return out


def unique_problems(parsed: ParsedSuite) -> list[Problem]:
    """Given ids and seqs must each be unique within the file."""
    problems: list[Problem] = []
    firsts: dict[tuple[str, Any], Path_] = {}
    for p in parsed.cases:
        keys = [("id", p.case.id)] if p.id_given else []
        if p.seq_given:
            keys.append(("seq", p.case.seq))
        for key in keys:
            first = firsts.setdefault(key, p.path)
            if first != p.path:
                where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in first)
                problems.append(Problem(p.path, f"{key[0]} {key[1]!r} is also that of {where}"))
    return problems


def parse_file(text: str, fmt: FileFormat, source: str) -> tuple[Any, Locate]:
    """The data of a YAML or JSON file (with the same limits and line lookup as suite files)."""
    from tracereplay.promote import suite_file

    data, problems, locate = suite_file._parse(text, fmt)
    if problems:
        raise SuiteFileError(source, problems)
    return data, locate


def derived_id(*parts: str) -> str:
    """A stable UUID for another tool's identifier (the same file imports to the same ids)."""
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


def as_uuid(value: Any) -> str | None:
    """The canonical form of ``value`` when it is a UUID string, else ``None``."""
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def as_text(value: Any) -> str:
    """A value as text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS).decode()


def one_line_name(value: str) -> str:
    """A name fit for a suite: one line, no surrounding spaces."""
    return " ".join(value.split())
