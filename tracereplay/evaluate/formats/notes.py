"""What a case's replay saw, as lines of text: argument and prompt drift, recorded calls never
made, live calls, the fork, tool results against the recording. The CLI prints them under the
results table, the pytest plugin puts them in a failed item's message, ``show`` under a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracereplay.scoring.outcomes import CaseReport, LlmReport, ReplayReport


def problem_notes(report: CaseReport) -> list[str]:
    """What the replay of a case saw that a reader should know (drift, recorded calls never
    made, live calls, LLM drift): of its first repetition, which is representative."""
    for run in report.runs:
        if run.replay is None:
            continue
        notes = []
        for d in run.replay.drift:
            if d.answered:
                notes.append(f"argument drift: {d.tool} " + "; ".join(d.differences[:3]))
        # a recorded call the replay made with other arguments is named by its drift, not here
        drifted = {d.recorded_position for d in run.replay.drift}
        unused = [u for u in run.replay.unused if u.position not in drifted]
        if unused:
            names = ", ".join(u.tool for u in unused[:5])
            notes.append(f"{len(unused)} recorded call(s) never made: {names}")
        if run.replay.history == "not taken":
            notes.append(
                f"history of {len(report.case.history)} message(s) not given: the agent takes "
                "none (a function with a history parameter, pydantic-ai, OpenAI Agents SDK and "
                "LangGraph agents do); replayed on its question alone"
            )
        if run.replay.live_calls:
            notes.append(f"{run.replay.live_calls} tool call(s) ran live")
        return notes + llm_notes(run.replay.llm) + tool_result_notes(run.replay)
    return []


def llm_notes(report: LlmReport | None) -> list[str]:
    """``--llm recorded``: the prompt drift of a replay, one line for the calls the recording
    answered and one for a fork's live part (the first call's differences, the others
    numbered: a changed system prompt drifts in every call, and the diffs are in ``--json``),
    and the recorded LLM calls it never asked."""
    if report is None:
        return []
    notes = []
    if report.fork_round is not None:
        notes.append(fork_note(report))
    for live in (False, True):  # the recording's answers, then a fork's live part
        drifted = [d for d in report.drift if d.live == live]
        if not drifted:
            continue
        first = drifted[0]
        line = f"prompt drift: LLM call {first.round}{' (live)' if live else ''}: "
        line += "; ".join(first.differences[:3])
        if len(drifted) > 1:
            more = ", ".join(str(d.round) for d in drifted[1:6])
            line += f" (and {len(drifted) - 1} more: LLM call {more}{', ...' if len(drifted) > 6 else ''})"
        notes.append(line)
    if report.unused:
        rounds = ", ".join(str(r) for r in report.unused[:5])
        notes.append(f"{len(report.unused)} recorded LLM call(s) never asked: round {rounds}")
    return notes


def tool_result_notes(report: ReplayReport) -> list[str]:
    """``--llm recorded --live-tools``: the tools' results against the recording (a diff per
    drifting call), and the LLM call from which the recording no longer answers the run."""
    said = report.tool_results_note()
    if not said:
        return []
    drift = report.tool_result_drift
    notes = [said]
    for d in drift[:3]:
        if d.recorded_position is None:
            notes.append(f"tool-result drift: {d.tool} (round {d.round}): no recorded call")
            continue
        notes.append(f"tool-result drift: {d.tool} (round {d.round}):")
        notes += ["  " + line for line in d.diff.splitlines()[:12]]
    if len(drift) > 3:
        notes.append(f"tool-result drift in {len(drift) - 3} more call(s) (see --json)")
    if report.diverged_at is not None:
        notes.append(report.diverged_note())
    return notes


def fork_note(report: LlmReport) -> str:
    """Where a fork (``--llm-until N``) left the recording (``LlmReport.fork_note``)."""
    return report.fork_note()


def answered_drift(report: CaseReport) -> bool:
    """Whether the recording answered a request of this case's replay whose prompt drifted
    (``--llm-match order``: the checks judged answers made for other prompts)."""
    return any(
        run.replay is not None
        and run.replay.llm is not None
        and run.replay.llm.llm_match != "strict"
        and any(not d.live for d in run.replay.llm.drift)
        for run in report.runs[:1]
    )


PROMPT_DRIFT_HINT = (
    "hint: the recording answered requests whose prompt drifted (--llm-match order): their "
    "answers were made for the recorded prompts; --llm-match strict makes such a case an ERROR "
    "(the whole diffs are in --json)"
)
