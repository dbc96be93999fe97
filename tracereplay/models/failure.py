"""Where a run that did not succeed stopped: the one answer ``tracereplay show`` and the UI's
run page mark (``✗ the run failed here``).

A tool call that raised and was the run's last step is where a failed run stopped; otherwise
its last LLM round (the call that failed, or the round the limit stopped), or, with no LLM
call recorded, its last tool call.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from tracereplay.models.run import Run


class FailurePoint(NamedTuple):
    """``("tool", round, index among that round's tool calls)`` or ``("llm", round, 0)``."""

    kind: Literal["llm", "tool"]
    round: int
    index: int


def failure_point(run: Run) -> FailurePoint | None:
    """Where ``run`` stopped (see the module docstring); None for a successful run."""
    if run.result.status == "success":
        return None
    steps: list[FailurePoint] = []
    rounds = sorted({c.round for c in run.llm_calls} | {c.round for c in run.result.tool_calls})
    failed_tools: list[FailurePoint] = []
    for round_no in rounds:
        if any(c.round == round_no for c in run.llm_calls):
            steps.append(FailurePoint("llm", round_no, 0))
        calls = [c for c in run.result.tool_calls if c.round == round_no]
        for i, call in enumerate(calls):
            steps.append(FailurePoint("tool", round_no, i))
            if call.error is not None:
                failed_tools.append(FailurePoint("tool", round_no, i))
    if run.result.status == "failed" and failed_tools and failed_tools[-1] == steps[-1]:
        return failed_tools[-1]
    llm_steps = [s for s in steps if s.kind == "llm"]
    if llm_steps:
        return llm_steps[-1]
    return steps[-1] if steps else None


def failure_text(run: Run) -> str:
    """What the mark says: the round limit, or a failure."""
    if run.result.status == "max_rounds_exceeded":
        return "✗ round limit reached here"
    return "✗ the run failed here"
