"""JUnit XML of an eval run (the format CI systems read): one ``testcase`` per case.

A FAILED case carries a ``<failure>``, an ERROR case an ``<error>``, each with the reason as its
message and the check results as its text; text is escaped by ``xml.etree`` (never raw).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from tracereplay.models import Status
from tracereplay.scoring.outcomes import CaseReport, EvalRunRecord

# characters XML 1.0 cannot carry at all (even escaped)
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    return _INVALID_XML.sub("\ufffd", str(value))


def _case_name(report: CaseReport, limit: int = 80) -> str:
    return _name(report.case.seq, report.case.query, limit)


def _name(seq: int, query: str, limit: int = 80) -> str:
    query = " ".join(query.split())
    if len(query) > limit:
        query = query[: limit - 1] + "…"
    return f"{seq:04d} {query}"


class _Brief(Protocol):
    """Reports that tell a case's seq, query, status and duration without building it."""

    def __len__(self) -> int: ...

    def __getitem__(self, k: int) -> CaseReport: ...

    def brief(self, k: int) -> tuple[int, str, Status, float]: ...


def _testcases(reports: Sequence[CaseReport]) -> Iterator[tuple[str, Status, float, Any]]:
    """``(name, status, duration_ms, report or None)`` per case; a passed case of reports that
    can tell its brief is not built (a big recorded suite is mostly passed cases)."""
    if hasattr(reports, "brief"):
        briefed = cast(_Brief, reports)
        for k in range(len(briefed)):
            seq, query, status, duration_ms = briefed.brief(k)
            report = None if status is Status.PASSED else briefed[k]
            yield _name(seq, query), status, duration_ms, report
        return
    for report in reports:
        yield _case_name(report), report.result.status, report.result.duration_ms, report


def _details(report: CaseReport) -> str:
    lines = [f"case {report.case.id}"]
    if report.result.run_id:
        lines.append(f"run {report.result.run_id}")
    for s in report.result.checks:
        score = "-" if s.score is None else f"{s.score:.3f}"
        lines.append(f"{s.status.value:<6} {s.check} (score {score}): {s.explanation}")
    if len(report.runs) > 1:
        for r in report.runs:
            lines.append(f"repetition {r.repetition + 1}: {r.status.value} {r.result.reason}")
    return "\n".join(lines)


def junit_tree(record: EvalRunRecord, reports: Sequence[CaseReport]) -> ET.ElementTree:
    """The ``<testsuites>`` document of an eval run."""
    cases = list(_testcases(reports))
    total_s = sum(duration for _, _, duration, _ in cases) / 1000
    failures = sum(1 for _, status, _, _ in cases if status is Status.FAILED)
    errors = sum(1 for _, status, _, _ in cases if status is Status.ERROR)
    counts = {
        "tests": str(len(reports)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": "0",
        "time": f"{total_s:.3f}",
    }
    root = ET.Element("testsuites", {"name": _text(f"tracereplay {record.suite_name}"), **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _text(record.suite_name),
            "timestamp": record.started_at.strftime("%Y-%m-%dT%H:%M:%S"),
            **counts,
        },
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("eval_run_id", record.eval_run_id),
        ("suite_id", record.suite_id),
        ("mode", record.mode),
        ("agent", record.agent),
        ("label", record.label),
        ("git_commit", record.git_commit),
    ):
        if value:
            ET.SubElement(props, "property", {"name": name, "value": _text(value)})
    for name, status, duration_ms, report in cases:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": _text(record.suite_name),
                "name": _text(name),
                "time": f"{duration_ms / 1000:.3f}",
            },
        )
        if status is Status.PASSED:
            continue
        tag = "failure" if status is Status.FAILED else "error"
        element = ET.SubElement(
            case,
            tag,
            {"message": _text(report.result.reason or status.value), "type": status.value},
        )
        element.text = _text(_details(report))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: str | Path, record: EvalRunRecord, reports: Sequence[CaseReport]) -> None:
    """Write the JUnit XML of an eval run to ``path`` (UTF-8, with an XML declaration)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    junit_tree(record, reports).write(target, encoding="utf-8", xml_declaration=True)
