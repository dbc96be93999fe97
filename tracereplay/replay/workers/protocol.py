"""What the eval and its agent processes say to each other: the settings an agent process is
set up with, the recordings each case is answered from, and the messages on the pipe.

Both sides import this module and neither imports the other's (``agent_process`` is the eval's
side, ``agent_child`` the process's): the child's imports stay the replay's, not the eval's
store and runner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tracereplay.models import EvalSuite, Run
from tracereplay.replay.answering.llm import LlmMatch, LlmMode, RecordedCall
from tracereplay.scoring.conversation import HistoryMode
from tracereplay.scoring.runner import Job

if TYPE_CHECKING:  # a Literal only; its module imports the SDK, the agent processes' part
    from tracereplay.replay.answering.recorded_tools import ToolMatch


@dataclass(frozen=True)
class AgentSetup:
    """What an agent process needs before its first case: the agent, the store, the checks."""

    agent: str  # module:attr
    db: Path
    check_modules: tuple[str, ...] = ()
    agent_call: str | None = None  # --agent-call NAME


@dataclass(frozen=True)
class ReplayPlan:
    """How every case of the eval is replayed (``Replayer``'s settings, without the agent)."""

    suite: EvalSuite
    eval_run_id: str
    tool_match: ToolMatch = "strict"
    live_tools: bool = False
    timeout_s: float | None = None
    llm: LlmMode = "live"
    llm_match: LlmMatch = "order"
    llm_until: int | None = None  # --llm-until N: a fork at LLM call N
    history: HistoryMode = "recorded"  # --history: a multi-turn case's earlier answers
    #: ``service.name`` of the replay runs when the eval sets tracereplay up for the agent
    #: (``trace_replays``): the source runs' service
    service_name: str | None = None


@dataclass(frozen=True)
class CaseInputs:
    """The recordings one case is answered from: its source run, the runs nested under it,
    how their results were encoded, and their LLM calls (``--llm recorded``)."""

    source: Run | None = None
    sub_runs: tuple[Run, ...] = ()
    encodings: Mapping[str, Sequence[str | None]] = field(default_factory=dict)
    llm_calls: tuple[RecordedCall, ...] = ()
    #: a multi-turn case: the recordings of its turns after the first (``source`` is turn 1's)
    turns: tuple[CaseInputs, ...] = ()

    def every_turn(self) -> tuple[CaseInputs, ...]:
        """These inputs and each later turn's, in order."""
        return (self, *self.turns)


@dataclass(frozen=True)
class Ready:
    """An agent process's ``ready`` message: the agent is loaded, whether it takes one case
    at a time, and one-line notes about it (a framework version its adapter was not tested
    with) for the eval to print."""

    one_at_a_time: bool = False
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- the messages
#: a message to an agent process: ("plan", ReplayPlan), ("jobs", slots, [task], [task]) (how
#: many cases the eval counts as running there, the cases to start now, then those to start
#: as soon as one of its cases ends), ("stop",); from it:
#: ("ready", Ready), ("failed", message), ("results", [(key, CaseRun)])
Task = tuple[int, Job, CaseInputs]
