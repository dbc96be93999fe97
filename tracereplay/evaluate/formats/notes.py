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
        if run.replay.unused:
            names = ", ".join(u.tool for u in run.replay.unused[:5])
            notes.append(f"{len(run.replay.unused)} recorded call(s) never made: {names}")
        if run.replay.live_calls:
            notes.append(f"{run.replay.live_calls} tool call(s) ran live")
        return notes + llm_notes(run.replay.llm) + tool_result_notes(run.replay)
    return []


def llm_notes(report: LlmReport | None) -> list[str]:
    """``--llm recorded``: the prompt drift of a replay (with the messages' diff), and the
    recorded LLM calls it never asked."""
    if report is None:
        return []
    notes = []
    if report.fork_round is not None:
        notes.append(fork_note(report))
    for d in report.drift[:3]:
        where = " (live)" if d.live else ""
        notes.append(f"prompt drift: LLM call {d.round}{where}: " + "; ".join(d.differences[:3]))
        notes += ["  " + line for line in d.diff.splitlines()[:12]]
    if len(report.drift) > 3:
        notes.append(f"prompt drift in {len(report.drift) - 3} more LLM call(s) (see --json)")
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
