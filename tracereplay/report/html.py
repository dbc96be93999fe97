"""``render_report``: one self-contained HTML page (inline CSS and SVG, no script, no network).

Every piece of stored text goes through ``e`` (HTML escaping, quotes included); the page also
carries a Content-Security-Policy that forbids scripts and any external load, so even markup
that slipped through could neither run nor phone home.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from importlib import resources
from typing import Any

import orjson

from tracereplay.evaluate.diff import BUCKETS, CaseDiff
from tracereplay.models import ToolCallRecord
from tracereplay.report.data import CaseView, CheckRow, RepetitionView, ReportData
from tracereplay.report.svg import trend_svg
from tracereplay.report.trajectory import Step

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: longest tool result shown (the rest is cut with a note)
RESULT_CHARS = 2000
#: longest response / query shown
TEXT_CHARS = 20000

_STEP_LABELS = {
    "match": "same call",
    "drift": "argument drift",
    "no_recording": "no recording",
    "unused": "recorded, not called",
    "recorded": "recorded",
}
_BUCKET_TEXT = {
    "Regressed": "regressed",
    "Fixed": "fixed",
    "StillFailing": "still failing",
    "Added": "added",
    "Removed": "removed",
    "Unchanged": "unchanged",
}


def e(value: Any) -> str:
    """HTML-escape any value's text (quotes too, so it is safe in attributes)."""
    return escape("" if value is None else str(value), quote=True)


def _css() -> str:
    return resources.files("tracereplay.report").joinpath("style.css").read_text(encoding="utf-8")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _when(value: datetime | None) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _clip(text: str, limit: int) -> str:
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


def _badge(status: str, extra: str = "") -> str:
    return f'<span class="badge {e(status)}{extra}">{e(status)}</span>'


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


# ---------------------------------------------------------------------- page parts
def _header(d: ReportData) -> str:
    r = d.run
    duration = (
        f"{(r.finished_at - r.started_at).total_seconds():.1f} s"
        if r.finished_at is not None
        else "not finished"
    )
    meta = [
        f"eval run <code>{e(r.eval_run_id)}</code>",
        f"mode {e(r.mode)}" + (f" (agent <code>{e(r.agent)}</code>)" if r.agent else ""),
        f"status {e(r.status)}",
        f"started {e(_when(r.started_at))}",
        f"took {e(duration)}",
    ]
    if r.label:
        meta.insert(1, f"label <strong>{e(r.label)}</strong>")
    if r.git_commit:
        dirty = " (dirty)" if r.git_dirty else ""
        meta.insert(2, f"commit <code>{e(r.git_commit[:12])}</code>{dirty}")
    return (
        f"<header><h1>Suite {e(r.suite_name)}</h1>"
        f'<p class="meta">{"".join(f"<span>{m}</span>" for m in meta)}</p></header>'
    )


def _summary(d: ReportData) -> str:
    s = d.stats
    cards = [
        ("pass rate", _pct(s.pass_rate)),
        ("passed", f"{s.passed} / {s.cases}"),
        ("failed", str(s.failed)),
        ("errored", str(s.errored)),
        ("aggregate score", _score(s.aggregate_score)),
        ("checks passed", f"{s.checks_passed} / {s.checks}"),
    ]
    if s.flaky:
        cards.append(("flaky", str(s.flaky)))
    body = "".join(
        f'<div class="card" data-metric="{e(label)}"><div class="value">{e(value)}</div>'
        f'<div class="label">{e(label)}</div></div>'
        for label, value in cards
    )
    failing = [c for c in d.cases if c.status != "PASSED"]
    links = ""
    if failing:
        items = ", ".join(
            f'<a href="#case-{e(c.case_id)}">#{c.seq} {e(c.status.lower())}</a>'
            for c in failing[:50]
        )
        more = f" and {len(failing) - 50} more" if len(failing) > 50 else ""
        links = f"<p>Not passing: {items}{more}</p>"
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{body}</div>{links}</section>'


def _trend(d: ReportData) -> str:
    return (
        '<section id="trend"><h2>Pass rate over the suite’s eval runs</h2>'
        f'<p class="meta">{len(d.trend)} eval run{"s" if len(d.trend) != 1 else ""}, oldest first; '
        "the large dot is this run.</p>"
        f"{trend_svg(d.trend)}</section>"
    )


def _change_row(c: CaseDiff) -> str:
    def status(s: Any) -> str:
        return _badge(s.value) if s is not None else '<span class="empty">absent</span>'

    return (
        f'<tr data-bucket="{e(c.bucket)}"><td><span class="badge bucket {e(c.bucket)}">'
        f"{e(_BUCKET_TEXT[c.bucket])}</span></td>"
        f'<td class="num">#{c.seq}</td>'
        f'<td><a href="#case-{e(c.case_id)}">{e(_clip(c.query, 160)) or e(c.case_id)}</a></td>'
        f"<td>{status(c.status_a)} → {status(c.status_b)}</td>"
        f'<td class="num">{_score(c.score_a)} → {_score(c.score_b)}</td></tr>'
    )


def _diff(d: ReportData) -> str:
    if d.previous is None:
        return (
            '<section id="diff"><h2>Compared with the previous eval run</h2>'
            '<p class="empty">This is the suite’s first eval run: there is nothing to compare.</p>'
            "</section>"
        )
    p = d.previous
    name = f" ({e(p.label)})" if p.label else ""
    counts = "".join(
        f'<div class="card" data-bucket="{e(b)}"><div class="value">{d.diff_counts.get(b, 0)}</div>'
        f'<div class="label">{e(_BUCKET_TEXT[b])}</div></div>'
        for b in BUCKETS
    )
    if d.changes:
        rows = "".join(_change_row(c) for c in d.changes)
        table = (
            '<table class="changes"><thead><tr><th>change</th><th class="num">case</th>'
            '<th>query</th><th>status</th><th class="num">score</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
    else:
        table = '<p class="empty">Every case passed in both runs.</p>'
    return (
        '<section id="diff"><h2>Compared with the previous eval run</h2>'
        f'<p class="meta">eval run <code>{e(p.eval_run_id)}</code>{name}, started '
        f"{e(_when(p.started_at))}, pass rate {e(_pct(p.pass_rate))}</p>"
        f'<div class="cards">{counts}</div>{table}</section>'
    )


def _arguments(arguments: dict[str, Any], drifted: set[str]) -> str:
    if not arguments:
        return '<span class="empty">no arguments</span>'
    items = []
    for key, value in arguments.items():
        text = f'<span class="key">{e(key)}</span>: <code>{e(_json(value))}</code>'
        if key in drifted:
            text = f'<mark class="drift" data-key="{e(key)}">{text}</mark>'
        items.append(f"<li>{text}</li>")
    return f'<ul class="args">{"".join(items)}</ul>'


def _call(call: ToolCallRecord | None, drifted: set[str], *, with_result: bool = True) -> str:
    if call is None:
        return '<span class="empty">—</span>'
    out = f'<div class="tool mono"><strong>{e(call.tool_name)}</strong></div>'
    out += _arguments(call.arguments, drifted)
    if call.error:
        out += f'<div class="tool-error">error: {e(_clip(call.error, RESULT_CHARS))}</div>'
    elif with_result and call.result:
        out += (
            f"<details><summary>result</summary><pre>{e(_clip(call.result, RESULT_CHARS))}</pre>"
            "</details>"
        )
    return out


def _step_row(step: Step, replay_mode: bool) -> str:
    drifted = set(step.drifted_keys)
    label = _STEP_LABELS[step.status]
    if step.status == "drift" and step.answered is not None:
        label += " (answered from the recording)" if step.answered else " (not answered)"
    status = f'<span class="step-status {e(step.status)}">{e(label)}</span>'
    if step.differences:
        status += (
            '<ul class="differences">'
            + "".join(f"<li>{e(x)}</li>" for x in step.differences)
            + "</ul>"
        )
    position = (
        step.replayed_position if step.replayed_position is not None else step.recorded_position
    )
    number = "" if position is None else str(position + 1)
    if not replay_mode:
        return (
            f'<tr class="{e(step.status)}"><td class="num">{number}</td>'
            f"<td>{_call(step.recorded, set())}</td></tr>"
        )
    return (
        f'<tr class="{e(step.status)}"><td class="num">{number}</td>'
        f"<td>{_call(step.recorded, drifted)}</td><td>{_call(step.replayed, drifted)}</td>"
        f"<td>{status}</td></tr>"
    )


def _trajectory(rep: RepetitionView, replay_mode: bool, source_found: bool) -> str:
    note = ""
    if replay_mode and not source_found:
        note = (
            '<p class="empty">The source run is not in the store: nothing recorded to compare.</p>'
        )
    if not rep.steps:
        return f'<h3>Tool trajectory</h3>{note}<p class="empty">No tool calls.</p>'
    if replay_mode:
        head = '<tr><th class="num">#</th><th>recorded</th><th>replayed</th><th>match</th></tr>'
        summary = ""
        if rep.replay is not None:
            r = rep.replay
            summary = (
                f'<p class="meta">tool matching {e(r.tool_match)}: {r.answered} answered from the '
                f"recording, {len(r.drift)} with argument drift, {len(r.unanswered)} unanswered, "
                f"{len(r.unused)} recordings unused</p>"
            )
    else:
        head = '<tr><th class="num">#</th><th>tool call (recorded run)</th></tr>'
        summary = ""
    rows = "".join(_step_row(s, replay_mode) for s in rep.steps)
    return (
        f"<h3>Tool trajectory</h3>{note}{summary}"
        f'<table class="trajectory"><thead>{head}</thead><tbody>{rows}</tbody></table>'
    )


def _checks(checks: list[CheckRow]) -> str:
    if not checks:
        return '<h3>Checks</h3><p class="empty">No check results.</p>'
    rows = "".join(
        f'<tr data-check="{e(c.name)}"><td class="mono">{e(c.name)}</td><td>{e(c.kind)}</td>'
        f'<td>{_badge(c.status)}</td><td class="num">{_score(c.score)}</td>'
        f"<td>{e(c.explanation)}</td></tr>"
        for c in checks
    )
    return (
        '<h3>Checks</h3><table class="checks"><thead><tr><th>check</th><th>kind</th>'
        '<th>status</th><th class="num">score</th><th>explanation</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _repetition(rep: RepetitionView, case: CaseView, replay_mode: bool, several: bool) -> str:
    head = ""
    if several:
        head = (
            f"<h3>Repetition {rep.repetition + 1}: {_badge(rep.status)} "
            f"score {_score(rep.score)}</h3>"
        )
        if rep.reason:
            head += f'<p class="reason">{e(rep.reason)}</p>'
    response = (
        f'<pre class="response">{e(_clip(rep.response, TEXT_CHARS))}</pre>'
        if rep.response
        else '<p class="empty">No response.</p>'
    )
    return (
        f'<div class="rep" data-repetition="{rep.repetition}">{head}'
        f"{_checks(rep.checks)}<h3>Response</h3>{response}"
        f"{_trajectory(rep, replay_mode, case.source_found)}</div>"
    )


def _case(case: CaseView, replay_mode: bool) -> str:
    is_open = " open" if case.status != "PASSED" or case.bucket == "Regressed" else ""
    badges = _badge(case.status)
    if case.bucket and case.bucket != "Unchanged":
        badges += (
            " "
            + f'<span class="badge bucket {e(case.bucket)}">{e(_BUCKET_TEXT[case.bucket])}</span>'
        )
    if case.flaky:
        badges += ' <span class="badge flaky">flaky</span>'
    query_line = " ".join(case.query.split())
    if len(query_line) > 140:
        query_line = query_line[:139] + "…"
    details = [
        f'<h3>Query</h3><pre class="query">{e(_clip(case.query, TEXT_CHARS))}</pre>',
    ]
    if case.expected_output:
        details.append(
            f'<h3>Expected output</h3><pre class="expected">{e(_clip(case.expected_output, TEXT_CHARS))}</pre>'
        )
    if case.reason:
        details.append(f'<p class="reason">{e(case.reason)}</p>')
    source = (
        f"source run <code>{e(case.source_run_id)}</code>"
        if case.source_run_id
        else "written by hand (no source run)"
    )
    details.append(f'<p class="meta">case <code>{e(case.case_id)}</code> · {source}</p>')
    several = len(case.repetitions) > 1
    details.extend(_repetition(r, case, replay_mode, several) for r in case.repetitions)
    return (
        f'<details class="case" id="case-{e(case.case_id)}" data-status="{e(case.status)}"{is_open}>'
        f'<summary>{badges} <span class="mono">#{case.seq}</span> '
        f'<span class="case-query">{e(query_line)}</span> '
        f'<span class="meta">score {_score(case.score)}</span></summary>'
        f"{''.join(details)}</details>"
    )


def _cases(d: ReportData) -> str:
    replay_mode = d.run.mode == "replay"
    if not d.cases:
        body = '<p class="empty">No case results in this eval run.</p>'
    else:
        body = "".join(_case(c, replay_mode) for c in d.cases)
    return f'<section id="cases"><h2>Cases</h2>{body}</section>'


def render_report(data: ReportData) -> str:
    """The whole page for ``data``."""
    title = f"{data.run.suite_name} · eval run {data.run.eval_run_id[:8]} · tracereplay"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{_css()}</style></head><body>"
        f"{_header(data)}{_summary(data)}{_trend(data)}{_diff(data)}{_cases(data)}"
        f"<footer>Generated by tracereplay {e(data.version)} on {e(_when(data.generated_at))}."
        "</footer></body></html>\n"
    )
