"""``EvalSettings``: what an eval is asked to do, and the one place it is built and checked.

``tracereplay eval``, ``tracereplay replay`` and the pytest plugin each read their own options
(typer, pytest's ini and flags) but share the rules between them (``check_options``: which
options need ``--agent`` or ``--llm recorded``) and the defaults of what was left unset
(``eval_settings``, ``runner_options``) or left to the suite (``suite_eval_defaults``), so
the three cannot drift apart. The module imports
no store and no replay code: the CLI checks its options before the evaluator loads.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracereplay.errors import BadParameterError
from tracereplay.scoring.conversation import HistoryMode
from tracereplay.scoring.runner import RunnerOptions

if TYPE_CHECKING:  # Literals only; their modules import the SDK, the agent processes' part
    from tracereplay.models import EvalSuite
    from tracereplay.replay.answering.llm import LlmMatch, LlmMode
    from tracereplay.replay.answering.recorded_tools import ToolMatch

#: the command's timeout (seconds) when neither the command line nor the suite sets one
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class EvalSettings:
    """What ``tracereplay eval`` was asked to do."""

    suite: str
    db: Path
    agent: str | None = None
    #: ``--agent-call NAME``: the entry point of an agent object to run it through
    agent_call: str | None = None
    #: ``--agent-cmd "node agent.mjs"``: the agent is a command run per case, in any language
    #: (``replay/command/``), instead of a Python callable
    agent_cmd: str | None = None
    tool_match: ToolMatch = "strict"
    live_tools: bool = False
    runner: RunnerOptions = field(default_factory=RunnerOptions)
    tags: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    check_modules: tuple[str, ...] = ()
    label: str | None = None
    llm: LlmMode = "live"  # --llm: "recorded" answers the agent's LLM calls from the recording
    llm_match: LlmMatch = "order"
    #: ``--llm-until N``: a fork: the first N LLM calls of each case answered from the
    #: recording, the later ones sent live
    llm_until: int | None = None
    #: ``--history``: the answers a multi-turn case's later turns are given: the recorded
    #: ones, or the agent's own from this replay (``scoring/conversation.py``)
    history: HistoryMode = "recorded"
    #: replay in this process (threads) instead of agent processes: a debugger can step into
    #: the agent, but an agent that crashes the interpreter ends the eval
    in_process: bool = False
    #: the eval run to add these results to (created with this id when it does not exist yet):
    #: several processes (CI shards, pytest-xdist workers) then make one eval run together
    eval_run: str | None = None
    #: (I, N): only the I-th of N shares of the selected cases (``--shard I/N``)
    shard: tuple[int, int] | None = None
    #: what of ``runner`` the command line left unset ("timeout", "retries", "fail_fast"): the
    #: suite's eval defaults set it once the eval has read the suite (no store open for them)
    suite_defaults: frozenset[str] = frozenset()
    #: ``--fail-under RATE``: exit 1 only when the pass rate (percent) is below it
    fail_under: float | None = None
    #: ``--max-regressions N``: exit 1 when more than N cases that passed in the baseline eval
    #: run fail now (see ``evaluate/gates.py``)
    max_regressions: int | None = None

    @property
    def gated(self) -> bool:
        """Whether a gate decides the exit code (else: any case not passed exits 1)."""
        return self.fail_under is not None or self.max_regressions is not None

    @property
    def replays(self) -> bool:
        """Whether cases are replayed (``--agent`` or ``--agent-cmd``), not scored as recorded."""
        return bool(self.agent or self.agent_cmd)

    @property
    def mode(self) -> str:
        return "replay" if self.replays else "recorded"

    def options(self) -> dict[str, Any]:
        """What is stored in ``eval_runs.options``."""
        r = self.runner
        return {
            "tool_match": self.tool_match if self.agent else None,
            **({"agent_cmd": self.agent_cmd} if self.agent_cmd else {}),
            "live_tools": self.live_tools,
            "concurrency": r.concurrency,
            "timeout_s": r.timeout_s,
            "retries": r.retries,
            "fail_fast": r.fail_fast,
            "repeat": r.repeat,
            "tags": list(self.tags),
            "cases": list(self.case_ids),
            "checks": list(self.check_modules),
            **(
                {
                    "llm": self.llm,
                    "llm_match": self.llm_match,
                    "in_process": self.in_process,
                    **({"llm_until": self.llm_until} if self.llm_until is not None else {}),
                    **({"history": self.history} if self.history != "recorded" else {}),
                }
                if self.replays
                else {}
            ),
        }


def _value(option: str | Enum | None) -> str | None:
    """A choice as its string (typer hands ``str`` enums, the plugin plain strings)."""
    return option.value if isinstance(option, Enum) else option


def check_options(
    *,
    agent: str | None,
    agent_call: str | None = None,
    tool_match: str | Enum | None = None,
    live_tools: bool = False,
    in_process: bool = False,
    llm: str | Enum | None = None,
    llm_match: str | Enum | None = None,
    llm_until: int | None = None,
    prefix: str = "--",
    agent_required: bool = True,
    agent_cmd: str | None = None,
) -> None:
    """Refuse options that cannot apply (``BadParameterError``, a usage error: exit 2).

    ``prefix`` names the options in the message (``--`` for the CLI, ``--tracereplay-`` for
    the pytest plugin, whose flags are the CLI's with that prefix). With ``agent_required``
    the replay options without an agent are an error; the plugin ignores them instead (its
    ini file may set them for sessions run with and without an agent)."""
    p = prefix
    if agent_cmd is not None:
        if agent is not None:
            raise BadParameterError(
                f"{p}agent-cmd and {p}agent are mutually exclusive: give one agent"
            )
        if agent_call is not None or tool_match is not None or in_process:
            raise BadParameterError(
                f"{p}agent-call, {p}tool-match and {p}in-process apply to {p}agent: a command's "
                "tools run as it runs them"
            )
        command_argv(agent_cmd, f"{p}agent-cmd")
        agent = agent_cmd  # the replay options below apply to it as to --agent
    if agent is None and agent_required:
        if tool_match is not None or live_tools or in_process:
            raise BadParameterError(
                f"{p}tool-match, {p}live-tools and {p}in-process apply to replay: add {p}agent"
            )
        if agent_call is not None:
            raise BadParameterError(f"{p}agent-call applies to replay: add {p}agent")
        if llm is not None or llm_match is not None:
            raise BadParameterError(f"{p}llm and {p}llm-match apply to replay: add {p}agent")
    recorded = _value(llm) == "recorded"
    if llm_match is not None and not recorded:
        raise BadParameterError(f"{p}llm-match applies to {p}llm recorded")
    if llm_until is not None and not recorded:
        raise BadParameterError(f"{p}llm-until applies to {p}llm recorded")


def command_argv(command: str, option: str = "--agent-cmd") -> list[str]:
    """An agent command's argv, split as a POSIX shell would (``shlex``) but run without one;
    empty, or quotes that do not close: ``BadParameterError``."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BadParameterError(f"{option}: cannot split '{command}': {exc}") from None
    if not argv:
        raise BadParameterError(f"{option} is empty: give the command that runs the agent")
    return argv


def check_gates(
    fail_under: float | str | None, max_regressions: int | str | None, prefix: str = "--"
) -> tuple[float | None, int | None]:
    """``--fail-under`` (a percent, 0 to 100) and ``--max-regressions`` (0 or more) as numbers;
    a bad value is a one-line ``BadParameterError``."""
    rate: float | None = None
    if fail_under is not None:
        try:
            rate = float(fail_under)
        except ValueError:
            rate = float("nan")
        if not 0 <= rate <= 100:  # NaN too
            raise BadParameterError(
                f"{prefix}fail-under must be a pass rate in percent, 0 to 100 (e.g. 90); "
                f"got '{fail_under}'"
            )
    most: int | None = None
    if max_regressions is not None:
        try:
            most = int(max_regressions)
        except ValueError:
            most = -1
        if most < 0:
            raise BadParameterError(
                f"{prefix}max-regressions must be a whole number, 0 or more; "
                f"got '{max_regressions}'"
            )
    return rate, most


#: cases run at once when the command does not say and a case may wait (``default_concurrency``)
DEFAULT_CONCURRENCY = 4


def default_concurrency(
    *,
    agent: str | None,
    llm: str | Enum | None,
    llm_until: int | None = None,
    live_tools: bool = False,
) -> int:
    """Cases run at once when ``--concurrency`` is not given. A Python agent's replay answered
    wholly from the recording (``--llm recorded``, no fork, no live tools) waits on nothing:
    its cases are CPU-bound, so one per usable core, as the agent processes are; a second
    case on a process's threads only contends for its GIL (300 recorded CrewAI cases on 2
    cores took 15.2-16.8 s wall at 2, 18.9-22.0 s at 4; LangGraph's and the OpenAI Agents
    SDK's no less at 2). Otherwise ``DEFAULT_CONCURRENCY``: a case waiting on a live model or
    tool, or on a command, costs a thread, not a core."""
    if agent and _value(llm) == "recorded" and llm_until is None and not live_tools:
        from tracereplay.replay.workers.agent_process import usable_cores

        return usable_cores()
    return DEFAULT_CONCURRENCY


def runner_options(
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int | None = None,
    fail_fast: bool | None = None,
    repeat: int = 1,
) -> tuple[RunnerOptions, frozenset[str]]:
    """``eval``'s runner options, and which of them were left unset (``None``): the suite's
    eval defaults set those once the eval has read the suite (else 60 s, 0 retries, no
    fail-fast). A timeout of 0 is no limit."""
    given = {"timeout": timeout, "retries": retries, "fail_fast": fail_fast}
    unset = frozenset(name for name, value in given.items() if value is None)
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    runner = RunnerOptions(
        concurrency=concurrency,
        timeout_s=timeout or None,
        retries=retries or 0,
        fail_fast=bool(fail_fast),
        repeat=repeat,
    )
    return runner, unset


def eval_settings(
    suite: str,
    db: Path,
    *,
    agent: str | None = None,
    agent_call: str | None = None,
    agent_cmd: str | None = None,
    tool_match: str | Enum | None = None,
    live_tools: bool = False,
    llm: str | Enum | None = None,
    llm_match: str | Enum | None = None,
    llm_until: int | None = None,
    history: str | Enum | None = None,
    in_process: bool = False,
    runner: RunnerOptions | None = None,
    suite_defaults: frozenset[str] = frozenset(),
    tags: Sequence[str] | None = None,
    case_ids: Sequence[str] | None = None,
    check_modules: Sequence[str] | None = None,
    label: str | None = None,
    eval_run: str | None = None,
    shard: tuple[int, int] | None = None,
    fail_under: float | None = None,
    max_regressions: int | None = None,
) -> EvalSettings:
    """``EvalSettings`` from options as a command reads them: a choice left unset (``None``)
    takes its default (tool match strict, LLM live, LLM match order), enums become their
    strings, sequences tuples. Checks nothing: ``check_options`` runs first, once."""
    return EvalSettings(
        suite=suite,
        db=db,
        agent=agent,
        agent_call=agent_call,
        agent_cmd=agent_cmd,
        tool_match=_value(tool_match) or "strict",  # type: ignore[arg-type]
        live_tools=live_tools,
        runner=runner if runner is not None else RunnerOptions(),
        tags=tuple(tags or ()),
        case_ids=tuple(case_ids or ()),
        check_modules=tuple(check_modules or ()),
        label=label,
        llm=_value(llm) or "live",  # type: ignore[arg-type]
        llm_match=_value(llm_match) or "order",  # type: ignore[arg-type]
        llm_until=llm_until,
        history=_value(history) or "recorded",  # type: ignore[arg-type]
        in_process=in_process,
        eval_run=eval_run,
        shard=shard,
        suite_defaults=suite_defaults,
        fail_under=fail_under,
        max_regressions=max_regressions,
    )


#: the key of a suite's metadata that holds its eval defaults
EVAL_DEFAULTS = "eval_defaults"


@dataclass(frozen=True)
class EvalDefaults:
    """The runner options a suite asks for (``None``: not set, the CLI default applies)."""

    timeout: float | None = None
    retries: int | None = None
    fail_fast: bool | None = None


def suite_eval_defaults(suite: EvalSuite) -> EvalDefaults:
    """``metadata.eval_defaults`` of a suite (``timeout`` seconds, ``retries``, ``fail_fast``:
    ``suite import`` of an AgenticAssure suite writes them from its ``config``, any suite file
    may give them); a value of the wrong type is a one-line error."""
    raw = suite.metadata.get(EVAL_DEFAULTS)
    if raw is None:
        return EvalDefaults()
    where = f"suite '{suite.name}': metadata.{EVAL_DEFAULTS}"
    if not isinstance(raw, dict):
        raise BadParameterError(f"{where} must be a mapping (timeout, retries, fail_fast)")
    unknown = sorted(set(raw) - {"timeout", "retries", "fail_fast"})
    if unknown:
        raise BadParameterError(
            f"{where}.{unknown[0]}: unknown (known: timeout, retries, fail_fast)"
        )
    timeout, retries, fail_fast = raw.get("timeout"), raw.get("retries"), raw.get("fail_fast")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0
    ):
        raise BadParameterError(f"{where}.timeout must be seconds, 0 or more (0: no limit)")
    if retries is not None and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
    ):
        raise BadParameterError(f"{where}.retries must be a whole number, 0 or more")
    if fail_fast is not None and not isinstance(fail_fast, bool):
        raise BadParameterError(f"{where}.fail_fast must be true or false")
    return EvalDefaults(
        None if timeout is None else float(timeout),
        retries,
        fail_fast,
    )


def with_suite_defaults(settings: EvalSettings, suite: EvalSuite) -> EvalSettings:
    """``settings`` with the runner options it left unset taken from ``suite``'s eval
    defaults, where the suite sets them (a value of the wrong type: ``BadParameterError``)."""
    defaults = suite_eval_defaults(suite)
    given = {
        "timeout_s": None if defaults.timeout is None else (defaults.timeout or None),
        "retries": defaults.retries,
        "fail_fast": defaults.fail_fast,
    }
    names = {"timeout": "timeout_s", "retries": "retries", "fail_fast": "fail_fast"}
    update = {
        names[n]: given[names[n]]
        for n in settings.suite_defaults
        if n in names and getattr(defaults, n) is not None
    }
    runner = replace(settings.runner, **update) if update else settings.runner
    return replace(settings, runner=runner, suite_defaults=frozenset())
