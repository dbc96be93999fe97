"""Gates that tolerate noise: ``--fail-under RATE`` and ``--max-regressions N``.

``eval`` (and the pytest plugin) exit 1 on any case that did not pass unless a gate is given:

- ``--fail-under RATE`` (percent, 0-100): 1 only when the pass rate is below RATE;
- ``--max-regressions N``: 1 when more than N cases that passed in the baseline (the suite's
  latest completed eval run before this one) do not pass now. With ``--repeat K`` and a
  baseline that has repetitions too, a case whose verdict changed gets Fisher's exact test
  (two-sided) on its passes and fails now against the baseline's; such a regression counts
  only when p < ``SIGNIFICANCE``.

With both gates, either one failing exits 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tracereplay.scoring.outcomes import EvalRunRecord

if TYPE_CHECKING:
    from tracereplay.evaluate.diff import CaseDiff

#: a regression measured over repetitions counts when Fisher's p-value is below this
SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class CaseChange:
    """A case whose verdict changed against the baseline."""

    case_id: str
    seq: int
    regressed: bool  # passed in the baseline, not now (else: fixed)
    #: (passes, repetitions) now and in the baseline
    now: tuple[int, int]
    before: tuple[int, int]
    #: Fisher's exact test, when both eval runs repeated the case
    p_value: float | None = None

    @property
    def counts(self) -> bool:
        """Whether this change counts as a regression for ``--max-regressions``."""
        return self.regressed and (self.p_value is None or self.p_value < SIGNIFICANCE)


@dataclass
class GateReport:
    """What the gates found: the rate gate, the baseline and the regressions against it."""

    fail_under: float | None = None  # percent
    pass_rate: float | None = None  # 0-1
    max_regressions: int | None = None
    baseline: str | None = None  # the baseline eval run's id, None when there is none
    prefix: str = "--"  # how the options are named (the pytest plugin: --tracereplay-)
    changes: list[CaseChange] = field(default_factory=list)

    @property
    def regressions(self) -> int:
        return sum(1 for c in self.changes if c.counts)

    def p_values(self) -> dict[str, float]:
        return {c.case_id: c.p_value for c in self.changes if c.p_value is not None}

    @property
    def rate_failed(self) -> bool:
        if self.fail_under is None:
            return False
        return (self.pass_rate or 0.0) * 100 < self.fail_under - 1e-9

    @property
    def regressions_failed(self) -> bool:
        return self.max_regressions is not None and self.regressions > self.max_regressions

    @property
    def failed(self) -> bool:
        return self.rate_failed or self.regressions_failed

    def lines(self) -> list[str]:
        """The summary's lines about the gates."""
        out = []
        if self.fail_under is not None:
            rate = (self.pass_rate or 0.0) * 100
            verdict = "below" if self.rate_failed else "at or above"
            out.append(
                f"pass rate {rate:.1f}% {verdict} {self.prefix}fail-under {self.fail_under:g}%"
            )
        if self.max_regressions is not None:
            if self.baseline is None:
                out.append(
                    f"regressions: 0 (max {self.max_regressions}): no baseline "
                    "(no earlier completed eval run of this suite)"
                )
            else:
                out.append(
                    f"regressions: {self.regressions} (max {self.max_regressions}) "
                    f"against eval run {self.baseline}"
                )
        for c in self.changes:
            if c.p_value is None:
                continue
            what = "regressed" if c.regressed else "fixed"
            note = "" if not c.regressed or c.counts else " (not significant: not counted)"
            out.append(
                f"  case {c.seq} {what}: {c.now[0]}/{c.now[1]} passed, baseline "
                f"{c.before[0]}/{c.before[1]}, p={c.p_value:.2g}{note}"
            )
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "fail_under": self.fail_under,
            "max_regressions": self.max_regressions,
            "baseline_eval_run": self.baseline,
            "regressions": self.regressions,
            "failed": self.failed,
            "changes": [
                {
                    "case_id": c.case_id,
                    "seq": c.seq,
                    "regressed": c.regressed,
                    "passes": c.now[0],
                    "repetitions": c.now[1],
                    "baseline_passes": c.before[0],
                    "baseline_repetitions": c.before[1],
                    "p_value": c.p_value,
                    "counted": c.counts,
                }
                for c in self.changes
            ],
        }


def compared_gates(
    run: EvalRunRecord,
    baseline: EvalRunRecord | None,
    cases: Sequence[CaseDiff],
    fail_under: float | None,
    max_regressions: int | None,
) -> GateReport:
    """The gates of ``run`` against ``baseline``, their cases compared (``diff``'s, the
    Markdown summary's): what ``eval`` would have said of them."""
    report = GateReport(fail_under, run.pass_rate, max_regressions)
    if baseline is not None:
        report.baseline = baseline.eval_run_id
        report.changes = case_changes(cases)
    return report


def case_changes(cases: Sequence[CaseDiff]) -> list[CaseChange]:
    """The regressed and fixed ``cases`` of a comparison (the baseline against this eval run, bucketed
    as ``diff`` does: a case passes only when every repetition passed), with the p-value
    ``diff`` gives when both eval runs repeated the case."""
    changes = []
    for c in cases:
        if c.bucket not in ("Regressed", "Fixed"):
            continue
        assert c.passes_a is not None and c.passes_b is not None
        regressed = c.bucket == "Regressed"
        changes.append(CaseChange(c.case_id, c.seq, regressed, c.passes_b, c.passes_a, c.p_value))
    changes.sort(key=lambda c: (c.seq, c.case_id))
    return changes


def gate_report(
    db: Path,
    record: EvalRunRecord,
    fail_under: float | None,
    max_regressions: int | None,
    prefix: str = "--",
) -> GateReport:
    """The gates of the eval run ``record`` (stored, finished): its baseline is the suite's
    latest completed eval run started before it."""
    from tracereplay.evaluate.diff import compare
    from tracereplay.evaluate.results_store import get_eval_run, load_case_runs
    from tracereplay.store.eval_runs import previous_completed_eval_run_id
    from tracereplay.store.open import open_store

    report = GateReport(fail_under, record.pass_rate, max_regressions, prefix=prefix)
    with open_store(db, drain=False) as store:
        base_id = previous_completed_eval_run_id(
            store, record.suite_id, record.started_at, record.eval_run_id
        )
        if base_id is None:
            return report
        base = get_eval_run(store, base_id)
        before = load_case_runs(store, base_id, with_checks=False)
        now = load_case_runs(store, record.eval_run_id, with_checks=False)
    report.baseline = base_id
    report.changes = case_changes(compare(base, record, before, now).cases)
    return report
