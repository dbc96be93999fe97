"""Multi-turn cases: a conversation replayed turn by turn, judged per turn and as a whole.

``conversation_attempt`` wraps any one-question attempt function (a replay in an agent process
or in this process, an ``--agent-cmd`` command, recorded mode's scoring), so every way of
running a case runs conversations the same way. A case with ``turns`` becomes one job per turn,
run in order on one conversation: each a copy of the case holding that turn's question,
expectations and source run (whose recorded tool and LLM calls answer it), and, as its
``history``, the conversation so far: the case's own history, then each earlier turn's question
and answer. The answer is the recorded one under ``--history recorded`` (the conversation as
production had it, so each turn is judged on its own) or the agent's own from this replay under
``--history replayed`` (so a regression in turn 1 carries into turn 3, as a user would meet it).

Each turn is scored by the case's checks other than the conversation checks; those then judge
the whole transcript once (``CheckSubject.conversation()``). The case's verdict is its worst
turn, folded with the conversation checks as a case folds its checks: a FAILED turn or check
fails it, else an ERROR makes it an ERROR. Its check results are each per-turn check over all
turns (the mean score; the turns it did not pass explain it) plus the conversation
checks, so every report, gate and view that reads a case reads a conversation unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from tracereplay.checks.registry import is_conversation_check, run_check
from tracereplay.checks.subject import CheckSubject, TranscriptTurn
from tracereplay.models import AgentResult, CheckSpec, EvalCase, ScoreResult, Status
from tracereplay.scoring.outcomes import CaseRun
from tracereplay.scoring.runner import AttemptFn, Job
from tracereplay.scoring.verdicts import check_score, resolve_checks, worst_status

HistoryMode = Literal["recorded", "replayed"]
HISTORY_MODES: tuple[str, ...] = ("recorded", "replayed")

#: the check a turn is judged by when the case's checks are all conversation checks: the
#: replay's own verdict and the turn's status
_TURN_FALLBACK = CheckSpec(kind="status")


def conversation_attempt(
    attempt: AttemptFn, suite_checks: Sequence[CheckSpec], history: HistoryMode = "recorded"
) -> AttemptFn:
    """``attempt`` for one-question cases; for a multi-turn case, its turns in order
    (``run_conversation``)."""

    def run(job: Job) -> CaseRun:
        if not job.case.turns:
            return attempt(job)
        return run_conversation(job, attempt, suite_checks, history)

    return run


def run_conversation(
    job: Job, attempt: AttemptFn, suite_checks: Sequence[CheckSpec], history: HistoryMode
) -> CaseRun:
    """Run every turn of ``job``'s case in order with ``attempt`` and fold them into the
    case's ``CaseRun`` (its ``turns`` each turn's own)."""
    case = job.case
    specs = list(resolve_checks(case, suite_checks))
    turn_specs = [s for s in specs if not is_conversation_check(s)] or [_TURN_FALLBACK]
    whole_specs = [s for s in specs if is_conversation_check(s)]
    said: list[dict[str, str]] = list(case.history)
    runs: list[CaseRun] = []
    for number, turn in enumerate(case.turns, 1):
        turn_case = case.model_copy(
            update={
                "query": turn.query,
                "history": list(said),
                "turns": [],
                "expected_output": turn.expected_output,
                "expected_tool_calls": list(turn.expected_tool_calls),
                "source_run_id": turn.source_run_id,
                "checks": turn_specs,
            }
        )
        run = attempt(Job(turn_case, job.repetition))
        runs.append(run.model_copy(update={"turn": number}))
        answer = turn.response if history == "recorded" else (run.response or "")
        said.append({"role": "user", "content": turn.query})
        if answer:
            said.append({"role": "assistant", "content": answer})
    return fold_turns(job, runs, whole_specs)


def transcript(case: EvalCase, runs: Sequence[CaseRun]) -> list[TranscriptTurn]:
    """The conversation the turns' runs made, as conversation checks see it."""
    return [
        TranscriptTurn(
            number=run.turn or i,
            query=turn.query,
            response=run.response or "",
            tool_calls=list(run.tool_calls),
            failed=run.response is None or run.status is Status.ERROR,
            expected_output=turn.expected_output,
        )
        for i, (turn, run) in enumerate(zip(case.turns, runs), 1)
    ]


def fold_turns(job: Job, runs: list[CaseRun], whole_specs: Sequence[CheckSpec]) -> CaseRun:
    """The case's ``CaseRun`` from its turns' runs and its conversation checks."""
    case = job.case
    last = runs[-1]
    tool_calls = [c for r in runs for c in r.tool_calls]
    subject = CheckSubject(
        case=case,
        result=AgentResult(response=last.response or "", tool_calls=tool_calls),
        transcript=transcript(case, runs),
    )
    whole = [run_check(spec, subject) for spec in whole_specs]
    checks = _per_turn_checks(runs) + whole
    statuses = [r.status for r in runs] + [s.status for s in whole]
    status = worst_status(statuses)
    scores = [r.result.score or 0.0 for r in runs] + [check_score(s) for s in whole]
    score = 0.0 if status is Status.ERROR else sum(scores) / len(scores)
    duration = sum(r.result.duration_ms for r in runs)
    result = last.result.model_copy(
        update={
            "status": status,
            "score": score,
            "reason": _reason(runs, whole),
            "checks": checks,
            "duration_ms": duration,
            "run_id": None,  # the runs are the turns'
        }
    )
    return last.model_copy(
        update={
            "case_id": case.id,
            "seq": case.seq,
            "result": result,
            "source_run_id": case.source_run_id,
            "tool_calls": tool_calls,
            "replay": None,
            "started_at": runs[0].started_at,
            "turn": None,
            "turns": runs,
        }
    )


def _per_turn_checks(runs: Sequence[CaseRun]) -> list[ScoreResult]:
    """Each check the turns were scored by, over all turns: its mean score, its worst status,
    and the first turn it did not pass as the explanation."""
    by_label: dict[str, list[tuple[int, ScoreResult]]] = {}
    for run in runs:
        for s in run.result.checks:
            by_label.setdefault(s.check, []).append((run.turn or 0, s))
    out = []
    for label, seen in by_label.items():
        status = worst_status(s.status for _, s in seen)
        bad = [(n, s) for n, s in seen if s.status is not Status.PASSED]
        if bad:
            explanation = "; ".join(f"turn {n}: {s.explanation}" for n, s in bad)
        else:
            explanation = f"passed on all {len(seen)} turns"
        score = None if status is Status.ERROR else sum(check_score(s) for _, s in seen) / len(seen)
        out.append(
            ScoreResult(
                check=label,
                score=score,
                passed=status is Status.PASSED,
                status=status,
                explanation=explanation,
                details={"turns": [n for n, _ in seen]},
            )
        )
    return out


def _reason(runs: Sequence[CaseRun], whole: Sequence[ScoreResult]) -> str:
    """Which turns did not pass and why, then the conversation checks that did not."""
    parts = [f"turn {r.turn}: {r.result.reason}" for r in runs if r.status is not Status.PASSED]
    parts += [
        f"{s.check}{'' if s.status is Status.FAILED else ' (error)'}: {s.explanation}"
        for s in whole
        if s.status is not Status.PASSED
    ]
    if parts:
        return "; ".join(parts)
    return f"all {len(runs)} turns passed" + (
        f" and {len(whole)} conversation check(s)" if whole else ""
    )
