"""``render_report``: one self-contained HTML page (inline CSS, SVG and one script; no network).

Every piece of stored text goes through ``e`` (HTML escaping, quotes included); the page also
carries a Content-Security-Policy that allows no script but the report's own (by its SHA-256)
and no external load, so even markup that slipped through could neither run nor phone home.
A big suite stays small: the cases that did not pass come first, the first ones written open;
the others' details sit in a JSON block the script shows when a case is opened.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from importlib import resources
from typing import Any

import orjson

from tracereplay.charts import stylesheet
from tracereplay.evaluate.diff import BUCKET_TEXT, BUCKETS, CaseDiff
from tracereplay.models import ToolCallRecord
from tracereplay.report.data import CaseView, CheckRow, RepetitionView, ReportData
from tracereplay.report.replay_modes import (
    DiffLine,
    Marker,
    ReplayModes,
    live_step,
    markers,
    replay_modes,
)
from tracereplay.report.replay_modes import stylesheet as replay_modes_stylesheet
from tracereplay.report.script import SCRIPT, script_hash
from tracereplay.report.svg import (
    grid_svg,
    metric_svg,
    runs_per_day_svg,
    tool_errors_svg,
    trend_svg,
)
from tracereplay.report.trajectory import Step, summarize

#: scripts: only the report's own (by its hash); no network, no other source of anything
CSP = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {script_hash()}"
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


def e(value: Any) -> str:
    """HTML-escape any value's text (quotes too, so it is safe in attributes)."""
    return escape("" if value is None else str(value), quote=True)


def _css() -> str:
    own = resources.files("tracereplay.report").joinpath("style.css").read_text(encoding="utf-8")
    return own + replay_modes_stylesheet() + stylesheet()


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
        f"{e(BUCKET_TEXT[c.bucket])}</span></td>"
        f'<td class="num">#{c.seq}</td>'
        f'<td><a href="#case-{e(c.case_id)}">{e(_clip(c.query, 160)) or e(c.case_id)}</a></td>'
        f"<td>{status(c.status_a)} → {status(c.status_b)}</td>"
        f'<td class="num">{_score(c.score_a)} → {_score(c.score_b)}</td></tr>'
    )


def _diff(d: ReportData) -> str:
    if d.previous is None:
        return (
            '<section id="diff"><h2>Compared with the previous completed eval run</h2>'
            '<p class="empty">This is the suite’s first eval run: there is nothing to compare.</p>'
            "</section>"
        )
    p = d.previous
    name = f" ({e(p.label)})" if p.label else ""
    counts = "".join(
        f'<div class="card" data-bucket="{e(b)}"><div class="value">{d.diff_counts.get(b, 0)}</div>'
        f'<div class="label">{e(BUCKET_TEXT[b])}</div></div>'
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
        '<section id="diff"><h2>Compared with the previous completed eval run</h2>'
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


def _step_row(step: Step, replay_mode: bool, live: bool = False) -> str:
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
    part = ""
    if live:
        number += ' <span class="part-live">live</span>'
        part = ' data-part="live"'
    if not replay_mode:
        return (
            f'<tr class="{e(step.status)}"><td class="num">{number}</td>'
            f"<td>{_call(step.recorded, set())}</td></tr>"
        )
    return (
        f'<tr class="{e(step.status)}"{part}><td class="num">{number}</td>'
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
            n = summarize(rep.steps)
            summary = (
                f'<p class="meta">tool matching {e(rep.replay.tool_match)}: {n.answered} answered'
                f" from the recording, {n.drift} with argument drift, {n.unanswered} unanswered,"
                f" {n.unused} recordings unused</p>"
            )
    else:
        head = '<tr><th class="num">#</th><th>tool call (recorded run)</th></tr>'
        summary = ""
    modes = replay_modes(rep.replay) if replay_mode else None
    lines = markers(rep.steps, modes)
    rows = ""
    for i, step in enumerate(rep.steps):
        rows += "".join(_marker_row(m) for m in lines if m.before == i)
        rows += _step_row(step, replay_mode, live_step(step, modes))
    rows += "".join(_marker_row(m) for m in lines if m.before == len(rep.steps))
    return (
        f"<h3>Tool trajectory</h3>{note}{summary}"
        f'<table class="trajectory"><thead>{head}</thead><tbody>{rows}</tbody></table>'
    )


def _marker_row(marker: Marker) -> str:
    """A line across the trajectory: where a fork went live, or where the run stopped being
    comparable with the recording."""
    return (
        f'<tr class="marker {e(marker.kind)}" data-marker="{e(marker.kind)}">'
        f'<td colspan="4">{e(marker.text)}</td></tr>'
    )


def _diff_block(lines: list[DiffLine]) -> str:
    body = "".join(f'<span class="{e(x.kind)}">{e(x.text)}</span>' for x in lines)
    return f'<pre class="diff">{body}</pre>'


def _replay_modes(modes: ReplayModes | None) -> str:
    """The fork (where the recording stopped, the drift of the live part) and the tools run for
    real (each result against the recorded one, and their diff), under the trajectory."""
    if modes is None:
        return ""
    out = ['<section class="replay-modes">']
    if modes.fork_round is not None:
        out.append(f'<h3>Fork</h3><p class="fork-note">{e(modes.fork_note)}</p>')
        for d in modes.live_drift:
            what = "; ".join(d.differences[:3])
            out.append(
                f'<div class="live-drift" data-round="{d.round}"><p>prompt drift of the live part:'
                f" LLM call {d.round} (live): {e(what)}</p>{_diff_block(d.diff) if d.diff else ''}</div>"
            )
        if modes.live_calls and not modes.live_drift:
            out.append('<p class="meta">The live part asked what the recording holds.</p>')
    if modes.tools_note:
        out.append(f'<h3>Tools run for real</h3><p class="tools-note">{e(modes.tools_note)}</p>')
    for t in modes.tool_results:
        recorded = (
            f"<pre>{e(_clip(t.recorded_result, RESULT_CHARS))}</pre>"
            if t.recorded_result is not None
            else '<p class="empty">no recorded call</p>'
        )
        out.append(
            f'<div class="tool-result" data-tool="{e(t.tool)}" data-round="{t.round}">'
            f'<p><strong class="mono">{e(t.tool)}</strong> (round {t.round}) '
            f"<code>{e(_json(t.arguments))}</code>: the result differs from the recording</p>"
            f'<div class="results"><div class="recorded-result"><h4>recorded</h4>{recorded}</div>'
            f'<div class="live-result"><h4>live</h4><pre>{e(_clip(t.live_result, RESULT_CHARS))}'
            f"</pre></div></div>{_diff_block(t.diff) if t.diff else ''}</div>"
        )
    if modes.diverged_note:
        out.append(f'<p class="diverged">{e(modes.diverged_note)}</p>')
    return "".join(out) + "</section>"


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
    if rep.turns:  # a multi-turn case: its checks over all turns, then each turn
        turns = "".join(_turn(t, case, replay_mode) for t in rep.turns)
        return (
            f'<div class="rep" data-repetition="{rep.repetition}">{head}'
            f"{_checks(rep.checks)}{turns}</div>"
        )
    return (
        f'<div class="rep" data-repetition="{rep.repetition}">{head}'
        f"{_checks(rep.checks)}<h3>Response</h3>{response}"
        f"{_trajectory(rep, replay_mode, case.source_found)}"
        f"{_replay_modes(replay_modes(rep.replay) if replay_mode else None)}</div>"
    )


def _turn(turn: RepetitionView, case: CaseView, replay_mode: bool) -> str:
    """One turn of a multi-turn case: its question, verdict, answer and trajectory."""
    reason = f'<p class="reason">{e(turn.reason)}</p>' if turn.status != "PASSED" else ""
    response = (
        f'<pre class="response">{e(_clip(turn.response, TEXT_CHARS))}</pre>'
        if turn.response
        else '<p class="empty">No response.</p>'
    )
    return (
        f'<div class="turn" data-turn="{turn.turn}"><h3>Turn {turn.turn}: {_badge(turn.status)}'
        f'</h3><pre class="query">{e(_clip(turn.query, TEXT_CHARS))}</pre>{reason}{response}'
        f"{_trajectory(turn, replay_mode, case.source_found)}"
        f"{_replay_modes(replay_modes(turn.replay) if replay_mode else None)}</div>"
    )


#: the first this many cases that did not pass are written open, their details in the page
INLINE_CASES = 20
#: the page stays under this many bytes: details of the cases further down the list (passed
#: ones in a big suite) are left out once it would grow past it
PAGE_BUDGET = 4_800_000
_ORDER = {"FAILED": 0, "ERROR": 1, "PASSED": 2}


def _failed_checks(case: CaseView) -> list[str]:
    names: dict[str, None] = {}
    for rep in case.repetitions:
        for c in rep.checks:
            if not c.passed:
                names[c.name] = None
    return list(names)


def _details(case: CaseView, replay_mode: bool) -> str:
    """What an opened case shows: query, expected output, reason, and each repetition."""
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
    return "".join(details)


def _case(case: CaseView, body: str | None, index: int | None, check_ids: dict[str, int]) -> str:
    """A case: a one-line summary (its status badge drawn by the stylesheet from
    ``data-status``: a big suite's page is mostly these lines); ``body`` its details written in
    the page (open), else ``index`` is where its details are in the page's JSON (shown when
    opened), else none."""
    badges = ""
    if case.bucket and case.bucket != "Unchanged":
        badges += (
            f'<span class="badge bucket {e(case.bucket)}">{e(BUCKET_TEXT[case.bucket])}</span> '
        )
    if case.flaky:
        badges += '<span class="badge flaky">flaky</span> '
    query_line = " ".join(case.query.split())
    if len(query_line) > 120:
        query_line = query_line[:119] + "…"
    attrs = f' id="case-{e(case.case_id)}" data-status="{e(case.status)}"'
    if case.flaky:
        attrs += " data-flaky"
    failed = " ".join(str(check_ids[n]) for n in _failed_checks(case))
    if failed:
        attrs += f' data-f="{failed}"'
    if body is not None:
        attrs += " open"
    elif index is not None:
        attrs += f' data-i="{index}"'
    else:
        attrs += " data-none"
    return (
        f'<details class="case"{attrs}><summary>{badges}<b>#{case.seq}</b> '
        f"{escape(query_line, quote=False)} <small>score {_score(case.score)}</small></summary>"
        f"{body or ''}</details>"
    )


def _filters(d: ReportData, checks: list[tuple[str, int]]) -> str:
    """Status filters that work without script (radio buttons the stylesheet reads), then the
    search box and the check filter the page's script runs (hidden until it does)."""
    counts = {s: sum(1 for c in d.cases if c.status == s) for s in ("FAILED", "ERROR", "PASSED")}
    flaky = sum(1 for c in d.cases if c.flaky)
    options = [("all", f"all {len(d.cases)}")]
    options += [(s.lower(), f"{s.lower()} {n}") for s, n in counts.items() if n]
    if flaky:
        options.append(("flaky", f"flaky {flaky}"))
    radios = "".join(
        f'<input type="radio" name="status-filter" id="f-{key}"{" checked" if key == "all" else ""}>'
        f'<label for="f-{key}">{e(text)}</label>'
        for key, text in options
    )
    check_options = '<option value="">any check</option>' + "".join(
        f'<option value="{i}">{e(name)} failed ({n})</option>' for i, (name, n) in enumerate(checks)
    )
    return (
        f'<div class="filters">Show {radios}'
        '<span id="case-tools" hidden>'
        '<input type="search" id="case-search" placeholder="search query, response, tools, id…" '
        'aria-label="search the cases" autocomplete="off">'
        f'<select id="case-check" aria-label="cases where this check failed">{check_options}'
        '</select> <span id="case-shown" class="meta"></span></span></div>'
    )


def _json_text(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</`` ends it, no ``<!``
    starts a comment there."""
    return _json(value).replace("</", "<\\/").replace("<!", "\\u003c!")


def _cases(d: ReportData, page_so_far: int) -> str:
    replay_mode = d.run.mode == "replay"
    if not d.cases:
        return '<section id="cases"><h2>Cases</h2><p class="empty">No case results in this eval run.</p></section>'
    # the cases that need a look first, then the flaky ones, then the rest, each by seq
    ordered = sorted(d.cases, key=lambda c: (_ORDER.get(c.status, 1), not c.flaky, c.seq))
    failing: dict[str, int] = {}
    for c in d.cases:
        for name in _failed_checks(c):
            failing[name] = failing.get(name, 0) + 1
    checks = sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))
    check_ids = {name: i for i, (name, _) in enumerate(checks)}
    inline = {c.case_id for c in [c for c in ordered if c.status != "PASSED"][:INLINE_CASES]}

    bodies: list[str] = []
    parts: list[str] = []
    size = page_so_far + 2000
    for c in ordered:
        if c.case_id in inline:
            part = _case(c, _details(c, replay_mode), None, check_ids)
            size += len(part.encode())
        else:
            part = _case(c, None, None, check_ids)
            size += len(part.encode()) + 12
        parts.append(part)
    lazy = 0
    for k, c in enumerate(ordered):
        if c.case_id in inline:
            continue
        body = _json_text(_details(c, replay_mode))
        extra = len(body.encode()) + 12
        if size + extra > PAGE_BUDGET:
            continue  # (a smaller one further down may still fit)
        size += extra
        parts[k] = _case(c, None, len(bodies), check_ids)
        bodies.append(body)
        lazy += 1
    left_out = len(ordered) - len(inline) - lazy
    note = ""
    if left_out:
        note = (
            f'<p class="meta" id="left-out">{left_out} case{"s" if left_out != 1 else ""} '
            f"further down the list {'are' if left_out != 1 else 'is'} listed without "
            'details to keep the page small: <code>tracereplay sql "SELECT * FROM score_history'
            f" WHERE eval_run_id = '{e(d.run.eval_run_id)}' AND case_id = 'ID'\"</code> "
            "prints a case's checks.</p>"
        )
    data = (
        f'<script type="application/json" id="case-details">[{",".join(bodies)}]</script>'
        if bodies
        else ""
    )
    return (
        f'<section id="cases"><h2>Cases</h2>{_filters(d, checks)}{"".join(parts)}{note}'
        f"{data}</section>"
    )


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 10_000 else f"{value:.0f} ms"


def _metrics(d: ReportData) -> str:
    """Latency and tokens per eval run, next to the pass-rate trend."""
    points = d.trend
    charts = []
    if any(p.p50_ms is not None for p in points):
        charts.append(
            '<figure><figcaption>Agent run duration</figcaption>'
            + metric_svg(
                points,
                [(0, "median", [p.p50_ms for p in points]),
                 (5, "95th percentile", [p.p95_ms for p in points])],
                _ms,
                "duration of the agent runs per eval run",
            )
            + "</figure>"
        )  # fmt: skip
    if any(p.tokens is not None for p in points):
        charts.append(
            "<figure><figcaption>Tokens per agent run (input + output, mean)</figcaption>"
            + metric_svg(
                points,
                [(3, "tokens", [p.tokens for p in points])],
                lambda v: f"{v:,.0f}",
                "tokens per agent run per eval run",
            )
            + "</figure>"
        )
    if not charts:
        body = '<p class="empty">No agent runs with a duration or token counts.</p>'
    else:
        body = f'<div class="charts">{"".join(charts)}</div>'
    return (
        '<section id="metrics"><h2>Latency and tokens per eval run</h2>'
        '<p class="meta">Of the agent runs each eval run scored: the replayed runs, or in '
        "recorded mode the recorded ones.</p>"
        f"{body}</section>"
    )


def _grid(d: ReportData) -> str:
    g = d.grid
    head = '<section id="flaky"><h2>Cases whose status moves</h2>'
    if not g.rows:
        n = len(g.runs)
        return (
            f'{head}<p class="empty">Every case had the same status in the last {n} eval '
            f"run{'s' if n != 1 else ''}, and no case was flaky within one.</p></section>"
        )
    shown = len(g.rows)
    more = f" (the {shown} that moved most shown)" if g.unstable > shown else ""
    legend = "".join(
        f'<span class="key"><span class="swatch {k}"></span>{t}</span>'
        for k, t in (("PASSED", "passed"), ("FAILED", "failed"), ("ERROR", "error"),
                     ("absent", "not in the run"), ("flaky", "flaky within the run"))
    )  # fmt: skip
    return (
        f'{head}<p class="meta">{g.unstable} case{"s" if g.unstable != 1 else ""} changed '
        f"status over the last {len(g.runs)} eval runs or were flaky within one{more}; "
        f'columns are eval runs, oldest first.</p><p class="legend">{legend}</p>'
        f"{grid_svg(g, {c.case_id for c in d.cases})}</section>"
    )


def _production(d: ReportData) -> str:
    prod = d.production
    head = '<section id="production"><h2>Production</h2>'
    who = (
        "agent" + ("s " if len(prod.agents) > 1 else " ")
        + ", ".join(f"<code>{e(a)}</code>" for a in prod.agents)
        if prod.agents
        else "every agent"
    )  # fmt: skip
    if not prod.days:
        return f'{head}<p class="empty">No live runs of {who} in the store.</p></section>'
    runs = sum(x.runs for x in prod.days)
    failed = sum(x.failed for x in prod.days)
    first, last = prod.days[0].day, prod.days[-1].day
    rows = "".join(
        f'<tr data-tool="{e(t.tool_name)}"><td class="mono">{e(t.tool_name)}</td>'
        f'<td class="num">{t.calls}</td><td class="num">{t.errors}</td>'
        f'<td class="num">{_pct(t.errors / t.calls if t.calls else None)}</td></tr>'
        for t in prod.tools
    )
    table = (
        '<table class="tools"><thead><tr><th>tool</th><th class="num">calls</th>'
        '<th class="num">errors</th><th class="num">error rate</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if rows
        else '<p class="empty">No tool calls.</p>'
    )
    return (
        f'{head}<p class="meta">Live runs of {who}, {first:%Y-%m-%d} to {last:%Y-%m-%d} '
        f"(the {len(prod.days)} days up to the newest): {runs} runs, {failed} failed.</p>"
        '<div class="charts"><figure><figcaption>Runs per day</figcaption>'
        f"{runs_per_day_svg(prod.days)}</figure>"
        "<figure><figcaption>Tool calls that failed, per day</figcaption>"
        f"{tool_errors_svg(prod.days)}</figure></div>"
        f"<h3>Tools</h3>{table}</section>"
    )


def render_report(data: ReportData) -> str:
    """The whole page for ``data``."""
    title = f"{data.run.suite_name} · eval run {data.run.eval_run_id[:8]} · tracereplay"
    head = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{_css()}</style></head><body>"
        f"{_header(data)}{_summary(data)}{_trend(data)}{_metrics(data)}{_diff(data)}"
        f"{_grid(data)}"
    )
    tail = (
        f"{_production(data)}"
        f"<footer>Generated by tracereplay {e(data.version)} on {e(_when(data.generated_at))}."
        f"</footer><script>{SCRIPT}</script></body></html>\n"
    )
    cases = _cases(data, len(head.encode()) + len(tail.encode()))
    return head + cases + tail
