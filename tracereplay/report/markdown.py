"""An eval run against the previous one as a short GitHub-flavoured Markdown summary: what
``diff --format markdown`` and ``report --format markdown`` write for a pull request's comment.

The summary names the suite and both eval runs, gives pass rate and mean score before and now,
lists each case whose verdict changed (its one-line reason) and counts the others. Every piece
of text that comes from the store (suite name, labels, queries, reasons) is escaped: it cannot
open markup, leave its table cell, mention someone (``@name``) or run onto another line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from urllib.parse import quote

from tracereplay.evaluate.diff import (
    BUCKET_TEXT,
    Bucket,
    CaseDiff,
    diff_eval_runs,
    settings_difference,
)
from tracereplay.evaluate.gates import GateReport
from tracereplay.evaluate.results_store import get_eval_run
from tracereplay.report.data import diff_with_previous
from tracereplay.scoring.outcomes import EvalRunRecord
from tracereplay.store.db import Store

#: at most this many changed cases are listed (the rest are counted)
CASES_LISTED = 50
#: a GitHub comment holds 65,536 characters: fewer cases are listed until the summary fits this
MAX_CHARS = 60_000
#: a cell's text is cut to this many characters
QUERY_CHARS = 80
REASON_CHARS = 200

#: the characters that start inline markup (or end a table cell, ``|``; GitHub's math, ``$``;
#: ``#``, which would close a heading; ``&`` only where it would start an entity such as ``&amp;``)
_SPECIAL = re.compile(r"([\\`*_\[\]<~|$#]|&(?=#?\w+;))")


def escape(value: str, limit: int | None = None) -> str:
    """``value`` as Markdown text on one line: whitespace runs (newlines too) made one space,
    cut to ``limit`` characters, markup characters backslash-escaped, and a word joiner after
    each ``@`` so GitHub does not notify the user it names."""
    text = " ".join(value.replace("\x00", "\ufffd").split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return _SPECIAL.sub(r"\\\1", text).replace("@", "@\u2060")


def code(value: str, cell: bool = False) -> str:
    """``value`` as a code span (one line), fenced with more backticks than it holds; in a
    table ``cell``, its pipes escaped (a code span does not keep the cell from ending there)."""
    text = " ".join(value.split())
    if cell:
        text = text.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _url(value: str) -> str:
    """A link destination: spaces, parentheses and angle brackets percent-encoded."""
    return quote(value.strip(), safe=":/?#[]@!$&'*+,;=%~")


def _pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.1f}%"


def _score(score: float | None, digits: int = 3) -> str:
    return "–" if score is None else f"{score:.{digits}f}"


def _change(before: float | None, now: float | None, scale: float, unit: str) -> str:
    if before is None or now is None:
        return "–"
    d = (now - before) * scale
    return f"{d:+.1f}{unit}" if scale != 1 else f"{d:+.3f}"


def _run_line(name: str, run: EvalRunRecord, short: dict[str, str]) -> str:
    parts = [f"eval run {code(short.get(run.eval_run_id, run.eval_run_id[:8]))}"]
    if run.label:
        parts.append(f"label {code(run.label)}")
    parts.append(run.mode + (f" {code(run.agent)}" if run.agent else ""))
    parts.append(f"{run.started_at:%Y-%m-%d %H:%M} UTC")
    if run.git_commit:
        parts.append(f"commit {code(run.git_commit[:12])}{' (dirty)' if run.git_dirty else ''}")
    return f"- **{name}**: " + " · ".join(parts)


def _status(status: object) -> str:
    return "–" if status is None else str(getattr(status, "value", status))


def _row(c: CaseDiff, link: str | None, first_run: bool) -> str:
    case = code(c.case_id[:8], cell=True)
    if link:
        anchor = "diff" if c.status_b is None else f"case-{c.case_id}"
        case = f"[{case}]({link}#{anchor})"
    reason = c.reason_b if c.status_b is not None else "not in this eval run"
    if c.status_b is not None and c.status_b.value == "PASSED":
        reason = ""
    change = BUCKET_TEXT[c.bucket].join(("**", "**") if c.bucket == "Regressed" else ("", ""))
    if c.p_value is not None:  # both eval runs repeated the case: Fisher's exact test
        change += f" (p={c.p_value:.2g})"
    cells = [
        "not passing" if first_run else change,
        str(c.seq),
        case,
        escape(c.query, QUERY_CHARS),
    ]
    if first_run:
        cells += [_status(c.status_b), _score(c.score_b, 2)]
    else:
        cells += [
            _status(c.status_a),
            _status(c.status_b),
            f"{_score(c.score_a, 2)} → {_score(c.score_b, 2)}",
        ]
    if reason and c.reasons_b:  # one check per line of the cell
        cells.append("<br>".join(escape(r, REASON_CHARS) for r in c.reasons_b))
    else:
        cells.append(escape(reason, REASON_CHARS))
    return "| " + " | ".join(cells) + " |"


def load_summary(
    store: Store, eval_run_id: str
) -> tuple[EvalRunRecord, EvalRunRecord | None, list[CaseDiff]]:
    """What ``markdown_summary`` needs for one eval run: the run, the previous eval run of its
    suite (as the HTML report compares them) and the cases compared; for the suite's first eval
    run, no previous one and its own cases (compared with itself: each one's ``status_b``)."""
    run = get_eval_run(store, eval_run_id)
    diff = diff_with_previous(store, run)
    if diff is None:
        diff = diff_eval_runs(store, run.eval_run_id, run.eval_run_id)
        return diff.b, None, diff.cases
    return diff.b, diff.a, diff.cases


def markdown_summary(
    run: EvalRunRecord,
    previous: EvalRunRecord | None,
    cases: Sequence[CaseDiff],
    *,
    report_url: str | None = None,
    short: dict[str, str] | None = None,
    details: str | None = None,
    limit: int = CASES_LISTED,
    gates: GateReport | None = None,
) -> str:
    """The summary of ``run`` against ``previous`` (its cases compared, as ``diff_eval_runs``
    gives them; with no previous eval run, ``cases`` holds ``run``'s own in ``status_b``).

    ``report_url``: where ``run``'s HTML report is published; each case links to its
    ``#case-ID`` anchor there. ``details``: the command that prints every case (named when
    some are left out). At most ``limit`` cases are listed, fewer if the summary would not fit
    a GitHub comment. ``gates``: ``--fail-under`` / ``--max-regressions`` as ``eval`` judges
    them, a line each."""
    while True:
        text = _summary(run, previous, cases, report_url, short or {}, details, limit, gates)
        if len(text) <= MAX_CHARS or limit == 0:
            return text
        limit //= 2


def _summary(
    run: EvalRunRecord,
    previous: EvalRunRecord | None,
    cases: Sequence[CaseDiff],
    report_url: str | None,
    short: dict[str, str],
    details: str | None,
    limit: int,
    gates: GateReport | None = None,
) -> str:
    link = _url(report_url).split("#", 1)[0] if report_url else None
    first_run = previous is None
    if previous is None:
        listed = [c for c in cases if c.status_b is not None and c.status_b.value != "PASSED"]
        same: Counter[str] = Counter()
    else:
        listed = [c for c in cases if c.status_a != c.status_b]
        same = Counter(_status(c.status_b) for c in cases if c.status_a == c.status_b)
    buckets: Counter[Bucket] = Counter(c.bucket for c in listed)

    out = [f"### tracereplay: suite {escape(run.suite_name)}", ""]
    settings = settings_difference(previous, run) if previous is not None else None
    if settings:
        out += [f"> **Note**: {escape(settings)}", ""]
    if previous is None:
        out.append(
            f"**{len(listed)} of {len(cases)} cases did not pass** in the suite's first eval run"
            if listed
            else f"**All {len(cases)} cases passed** in the suite's first eval run"
        )
    else:
        regressed = buckets["Regressed"]
        head = (
            f"**{regressed} case{'s' if regressed != 1 else ''} regressed**"
            if regressed
            else "**No case regressed**"
        )
        ids = [short.get(r.eval_run_id, r.eval_run_id[:8]) for r in (run, previous)]
        out.append(f"{head}: eval run {code(ids[0])} compared with {code(ids[1])}")
    out += ["", _run_line("now", run, short)]
    if previous is not None:
        out.append(_run_line("before", previous, short))
    out.append("")

    rate = f"{_pct(run.pass_rate)} ({run.passed}/{run.total_cases})"
    if previous is None:
        out += [
            "| | now |",
            "| --- | ---: |",
            f"| pass rate | {rate} |",
            f"| mean score | {_score(run.aggregate_score)} |",
        ]
    else:
        before = f"{_pct(previous.pass_rate)} ({previous.passed}/{previous.total_cases})"
        out += [
            "| | before | now | change |",
            "| --- | ---: | ---: | ---: |",
            f"| pass rate | {before} | {rate} | "
            f"{_change(previous.pass_rate, run.pass_rate, 100, ' pts')} |",
            f"| mean score | {_score(previous.aggregate_score)} | {_score(run.aggregate_score)} | "
            f"{_change(previous.aggregate_score, run.aggregate_score, 1, '')} |",
        ]
    out.append("")

    if listed:
        if first_run:
            out += [
                "| | # | case | query | status | score | reason |",
                "| --- | ---: | --- | --- | --- | ---: | --- |",
            ]
        else:
            out += [
                "| change | # | case | query | before | now | score | reason |",
                "| --- | ---: | --- | --- | --- | --- | ---: | --- |",
            ]
        out += [_row(c, link, first_run) for c in listed[:limit]]
        out.append("")
        if len(listed) > limit:
            more = len(listed) - limit
            where = f": {code(details)} lists them all" if details else ""
            out += [f"…and {more} more case{'s' if more != 1 else ''}{where}.", ""]
    elif not first_run:
        out += ["No case changed verdict.", ""]

    if gates is not None:
        verdict = "**failed**" if gates.failed else "passed"
        out += [f"Gates {verdict}:", ""]
        out += [f"- {escape(line)}" for line in gates.lines() if not line.startswith(" ")]
        out.append("")
    if same:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(same.items()))
        out += [f"Verdict unchanged: {counts}.", ""]
    if link:
        out += [f"[Full report]({link})", ""]
    return "\n".join(out)
