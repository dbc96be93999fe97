"""Comparing two eval runs of one suite, case by case.

Buckets (by case id; a case's status is over all its repetitions):

- Regressed: passed in A, not in B;   - Fixed: not passed in A, passed in B;
- StillFailing: passed in neither;    - Unchanged: passed in both;
- Added: only in B;                   - Removed: only in A.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson
from pydantic import Field

from tracereplay.errors import NotFoundError, TraceReplayError
from tracereplay.evaluate.results_store import get_eval_run, load_case_runs, resolve_eval_run_id
from tracereplay.models import EvaluationResult, Status
from tracereplay.models.run import _Record
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord
from tracereplay.scoring.significance import fisher_exact
from tracereplay.scoring.verdicts import check_reasons, merge_repeats
from tracereplay.store.db import Store
from tracereplay.store.eval_runs import (
    eval_run_ids_of_suite,
    latest_completed_eval_runs,
    latest_labelled,
    latest_suite,
)
from tracereplay.store.suites import case_queries

Bucket = Literal["Regressed", "Fixed", "StillFailing", "Added", "Removed", "Unchanged"]
BUCKETS: tuple[Bucket, ...] = (
    "Regressed",
    "Fixed",
    "StillFailing",
    "Added",
    "Removed",
    "Unchanged",
)
#: how each bucket reads to a person (the HTML report, the Markdown summary)
BUCKET_TEXT: dict[Bucket, str] = {
    "Regressed": "regressed",
    "Fixed": "fixed",
    "StillFailing": "still failing",
    "Added": "added",
    "Removed": "removed",
    "Unchanged": "unchanged",
}


class DifferentSuitesError(TraceReplayError):
    """The two eval runs score different suites: there is nothing to compare case by case."""


class CaseDiff(_Record):
    """One case in the comparison."""

    case_id: str
    seq: int
    query: str = ""
    bucket: Bucket
    status_a: Status | None = None
    status_b: Status | None = None
    score_a: float | None = None
    score_b: float | None = None
    reason_a: str = ""
    reason_b: str = ""
    #: why the case did not pass in B, one whole line per check (``check_reasons``)
    reasons_b: list[str] = Field(default_factory=list)
    #: (passes, repetitions) in A and in B, when the case is in it
    passes_a: tuple[int, int] | None = None
    passes_b: tuple[int, int] | None = None
    #: a verdict that changed between two eval runs that both repeated the case (``--repeat``):
    #: Fisher's exact test (two-sided) on its passes and fails in A and B
    p_value: float | None = None

    @property
    def delta(self) -> float | None:
        """Score in B minus score in A (None when either is unknown)."""
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_b - self.score_a


class EvalDiff(_Record):
    """Two eval runs of one suite compared: every case in a bucket."""

    a: EvalRunRecord
    b: EvalRunRecord
    cases: list[CaseDiff] = Field(default_factory=list)

    def bucket(self, name: Bucket) -> list[CaseDiff]:
        return [c for c in self.cases if c.bucket == name]

    def counts(self) -> dict[str, int]:
        return {name: len(self.bucket(name)) for name in BUCKETS}

    def settings_note(self) -> str | None:
        """One line when A and B were run with different settings (``settings_difference``)."""
        return settings_difference(self.a, self.b)


def _field(run: EvalRunRecord | Mapping[str, Any], name: str) -> Any:
    return run.get(name) if isinstance(run, Mapping) else getattr(run, name)


def _llm_text(options: Mapping[str, Any]) -> str:
    """Where a replay's LLM answers came from: ``live``, ``recorded (order)``, ``recorded
    (strict) for the first 3 calls, then live`` (``--llm``, ``--llm-match``, ``--llm-until``)."""
    if options.get("llm") != "recorded":
        return "live"
    text = f"recorded ({options.get('llm_match') or 'order'})"
    until = options.get("llm_until")
    if until is not None:
        text += f" for the first {until} call{'s' if until != 1 else ''}, then live"
    return text


def run_settings(run: EvalRunRecord | Mapping[str, Any]) -> dict[str, str]:
    """What an eval run's verdicts depend on besides the agent's code: its mode and, in replay
    mode, the agent and where the LLM answers came from. ``run``: an ``EvalRunRecord`` or an
    ``eval_runs`` row (``options`` parsed)."""
    mode = str(_field(run, "mode"))
    if mode != "replay":
        return {"mode": mode}
    options = _field(run, "options") or {}
    return {"mode": mode, "agent": _field(run, "agent") or "-", "llm": _llm_text(options)}


def settings_text(run: EvalRunRecord | Mapping[str, Any]) -> str:
    """An eval run's settings in a few words: ``recorded``, ``replay · LLM recorded (strict)``,
    ``replay · LLM live`` (the UI's Mode columns; ``options`` parsed or JSON text)."""
    options = _field(run, "options")
    if isinstance(options, (str, bytes)):
        options = orjson.loads(options) if options else {}
    s = run_settings({"mode": _field(run, "mode"), "agent": _field(run, "agent"),
                      "options": options or {}})  # fmt: skip
    return s["mode"] if s["mode"] != "replay" else f"replay · LLM {s['llm']}"


def settings_difference(
    a: EvalRunRecord | Mapping[str, Any], b: EvalRunRecord | Mapping[str, Any]
) -> str | None:
    """One line saying how eval runs ``a`` and ``b`` differ in mode (recorded/replay), LLM
    source and matching (``--llm``, ``--llm-match``, ``--llm-until``) or agent, or None when
    they do not: ``diff``'s first line, the Markdown summary's and the UI diff page's."""
    sa, sb = run_settings(a), run_settings(b)
    if sa == sb:
        return None
    if sa["mode"] != sb["mode"]:

        def described(s: dict[str, str]) -> str:
            if s["mode"] != "replay":
                return s["mode"]
            return f"replay (agent {s['agent']}, llm {s['llm']})"

        parts = [f"mode {described(sa)} vs {described(sb)}"]
    else:
        parts = [f"{k} {sa[k]} vs {sb[k]}" for k in ("llm", "agent") if sa[k] != sb[k]]
    return (
        "the two eval runs differ in settings: "
        + "; ".join(parts)
        + "; their verdicts are not comparable one for one"
    )


def per_case(runs: Sequence[CaseRun]) -> dict[str, tuple[int, EvaluationResult]]:
    """Each case's ``(seq, result over its repetitions)``."""
    grouped: dict[str, list[CaseRun]] = defaultdict(list)
    for r in runs:
        grouped[r.case_id].append(r)
    return {
        cid: (rs[0].seq, merge_repeats([r.result for r in sorted(rs, key=lambda r: r.repetition)]))
        for cid, rs in grouped.items()
    }


def pass_counts(runs: Sequence[CaseRun]) -> dict[str, tuple[int, int]]:
    """Each case's ``(passes, repetitions)``."""
    out: dict[str, tuple[int, int]] = {}
    for r in runs:
        passes, n = out.get(r.case_id, (0, 0))
        out[r.case_id] = (passes + (r.result.status is Status.PASSED), n + 1)
    return out


def _p_value(bucket: Bucket, a: tuple[int, int] | None, b: tuple[int, int] | None) -> float | None:
    """Fisher's p-value of a changed verdict, when both eval runs repeated the case."""
    if bucket not in ("Regressed", "Fixed") or a is None or b is None or a[1] < 2 or b[1] < 2:
        return None
    return fisher_exact([[b[0], b[1] - b[0]], [a[0], a[1] - a[0]]])


def _bucket(a: EvaluationResult | None, b: EvaluationResult | None) -> Bucket:
    if a is None:
        return "Added"
    if b is None:
        return "Removed"
    pa_, pb = a.status is Status.PASSED, b.status is Status.PASSED
    if pa_ and pb:
        return "Unchanged"
    if pa_:
        return "Regressed"
    if pb:
        return "Fixed"
    return "StillFailing"


def compare(
    a: EvalRunRecord,
    b: EvalRunRecord,
    runs_a: Sequence[CaseRun],
    runs_b: Sequence[CaseRun],
    queries: dict[str, str] | None = None,
) -> EvalDiff:
    """Bucket every case of ``a`` and ``b`` (which must be of the same suite)."""
    if a.suite_id != b.suite_id:
        raise DifferentSuitesError(
            f"eval runs {a.eval_run_id[:8]} (suite '{a.suite_name}') and {b.eval_run_id[:8]} "
            f"(suite '{b.suite_name}') are of different suites; diff compares two runs of one suite"
        )
    cases_a, cases_b = per_case(runs_a), per_case(runs_b)
    counts_a, counts_b = pass_counts(runs_a), pass_counts(runs_b)
    queries = queries or {}
    out: list[CaseDiff] = []
    for case_id in cases_a.keys() | cases_b.keys():
        seq_a, ra = cases_a.get(case_id, (None, None))
        seq_b, rb = cases_b.get(case_id, (None, None))
        seq = seq_b if seq_b is not None else seq_a
        bucket = _bucket(ra, rb)
        pa, pb = counts_a.get(case_id), counts_b.get(case_id)
        out.append(
            CaseDiff(
                case_id=case_id,
                seq=seq if seq is not None else 0,
                query=queries.get(case_id, ""),
                bucket=bucket,
                status_a=ra.status if ra else None,
                status_b=rb.status if rb else None,
                score_a=ra.score if ra else None,
                score_b=rb.score if rb else None,
                reason_a=ra.reason if ra else "",
                reason_b=rb.reason if rb else "",
                reasons_b=check_reasons(rb) if rb and rb.status is not Status.PASSED else [],
                passes_a=pa,
                passes_b=pb,
                p_value=_p_value(bucket, pa, pb),
            )
        )
    out.sort(key=lambda c: (BUCKETS.index(c.bucket), c.seq, c.case_id))
    return EvalDiff(a=a, b=b, cases=out)


def diff_eval_runs(store: Store, ident_a: str, ident_b: str) -> EvalDiff:
    """Load two eval runs (ids, unique prefixes, labels or ``suite@N``) and compare them."""
    a = get_eval_run(store, resolve_eval_run_ref(store, ident_a))
    b = get_eval_run(store, resolve_eval_run_ref(store, ident_b))
    if a.suite_id != b.suite_id:
        return compare(a, b, [], [])  # raises DifferentSuitesError
    runs_a = load_case_runs(store, a.eval_run_id, with_checks=False)
    runs_b = load_case_runs(store, b.eval_run_id, with_checks=False)
    ids = list({r.case_id for r in runs_a} | {r.case_id for r in runs_b})
    return compare(a, b, runs_a, runs_b, case_queries(store, ids))


def resolve_eval_run_ref(store: Store, ref: str) -> str:
    """The eval run id ``ref`` names: ``SUITE@N`` (the suite's Nth eval run, as ``run_number``
    in ``suite_trend``; ``SUITE@-1`` its latest, ``SUITE@-2`` the one before), a label given
    with ``eval --label`` (its latest eval run), or an eval run id or unique prefix of one."""
    text = ref.strip()
    if "@" in text:
        suite, _, number = text.rpartition("@")
        try:
            n = int(number)
        except ValueError:
            raise NotFoundError(
                f"'{ref}': after @ comes a run number (suite@3) or -1 for the latest"
            ) from None
        rows = eval_run_ids_of_suite(store, suite)
        if not rows:
            raise NotFoundError(f"'{ref}': suite '{suite}' has no eval run")
        index = n - 1 if n > 0 else len(rows) + n
        if n == 0 or not 0 <= index < len(rows):
            raise NotFoundError(
                f"'{ref}': suite '{suite}' has eval runs 1 to {len(rows)} (or -1 for the latest)"
            )
        return rows[index]
    labelled = latest_labelled(store, text)
    if labelled is not None:
        return labelled
    try:
        return resolve_eval_run_id(store, text)
    except NotFoundError:
        raise NotFoundError(
            f"no eval run id starts with '{ref}' and no eval run is labelled so"
        ) from None


def last_two(store: Store, suite: str | None = None) -> tuple[str, str, list[tuple[str, str]]]:
    """The latest completed eval run (of ``suite``, else of the suite evaluated last) and the
    completed one of the same suite before it: what ``diff --last`` compares; and
    ``(eval_run_id, status)`` of each running, interrupted or stopped eval run skipped."""
    latest = latest_suite(store, suite)
    if latest is None:
        where = f" of suite '{suite}'" if suite else ""
        raise NotFoundError(f"no eval run{where} in the store (run tracereplay eval first)")
    suite_id, suite_name = latest
    rows, skipped = latest_completed_eval_runs(store, 2, suite_id=suite_id)
    if len(rows) < 2:
        held = "no completed eval run" if not rows else "one completed eval run"
        also = f" (and {len(skipped)} not completed)" if skipped else ""
        raise NotFoundError(
            f"suite '{suite_name}' has {held}{also}; --last needs two (run tracereplay eval again)"
        )
    return rows[1], rows[0], skipped


def skipped_note(skipped: Sequence[tuple[str, str]], what: str) -> str | None:
    """``note: skipped eval run 3f2a1b0c (interrupted): WHAT`` for the eval runs ``--last`` or
    ``report`` passed over, or None when none was."""
    if not skipped:
        return None
    runs = ", ".join(f"{eval_run_id[:8]} ({status})" for eval_run_id, status in skipped)
    return f"note: skipped eval run{'s' if len(skipped) != 1 else ''} {runs}: {what}"
