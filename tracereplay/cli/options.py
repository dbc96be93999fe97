"""The command-line options ``eval`` and ``replay`` both declare: one declaration each.

Each function returns the ``typer.Option`` to put in a parameter's ``Annotated``: the name,
metavar, bounds and choices are the same for every command, and so is the help unless a
command words it for itself (``help=``); ``panel`` is the help panel the option is listed in.
The rules between the options are not here: ``tracereplay.evaluate.settings.check_options``.
Only typer is imported: ``eval --agent`` starts its fork server before anything heavy loads.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer


class ToolMatchOption(str, Enum):
    strict = "strict"
    fifo = "fifo"


class LlmOption(str, Enum):
    live = "live"
    recorded = "recorded"


class LlmMatchOption(str, Enum):
    order = "order"
    strict = "strict"


class HistoryOption(str, Enum):
    recorded = "recorded"
    replayed = "replayed"


def _option(*names: str, panel: str | None, **kwargs: Any) -> Any:
    return typer.Option(*names, rich_help_panel=panel, **kwargs)


def agent(help: str, panel: str | None = None, metavar: str | None = None) -> Any:
    """``--agent MODULE:ATTR``: the agent a case is replayed with."""
    return _option("--agent", panel=panel, metavar=metavar, help=help)


def agent_cmd(panel: str | None = None, help: str | None = None) -> Any:
    """``--agent-cmd COMMAND``: the agent is a command, in any language."""
    return _option(
        "--agent-cmd",
        panel=panel,
        metavar="COMMAND",
        help=help or "Replay this command instead (any language).",
    )


def agent_call(panel: str | None = None) -> Any:
    """``--agent-call NAME``: the agent object's entry point."""
    return _option(
        "--agent-call",
        panel=panel,
        metavar="NAME",
        help="The agent object's method to run it by (run, invoke...).",
    )


def tool_match(
    help: str = "strict (default) answers a tool call from a recording with the same "
    "name and arguments; fifo from the next unused recording of that name.",
    panel: str | None = None,
) -> Any:
    """``--tool-match strict|fifo`` (``ToolMatchOption``; unset: strict)."""
    return _option("--tool-match", panel=panel, help=help, show_default=False)


def live_tools(
    help: str = "Run the real tool for a call no recording answers (with --llm recorded: "
    "every tool, its result compared), instead of failing the case.",
    panel: str | None = None,
) -> Any:
    """``--live-tools``: tools run for real where the recording does not answer."""
    return _option("--live-tools", panel=panel, help=help)


def llm(
    help: str = "live (default) calls the agent's model; recorded answers every LLM "
    "call from the recording (offline, no API key).",
    panel: str | None = None,
) -> Any:
    """``--llm live|recorded`` (``LlmOption``; unset: live)."""
    return _option("--llm", panel=panel, help=help, show_default=False)


def llm_match(
    help: str = "With --llm recorded: order (default) answers LLM calls in order and reports "
    "prompt drift; strict makes a request that differs from the recorded one an ERROR.",
    panel: str | None = None,
) -> Any:
    """``--llm-match order|strict`` (``LlmMatchOption``; unset: order)."""
    return _option("--llm-match", panel=panel, help=help, show_default=False)


def llm_until(
    help: str = "With --llm recorded: fork at LLM call N (calls 1..N and their tools from the "
    "recording, the rest live).",
    panel: str | None = None,
) -> Any:
    """``--llm-until N``: a fork at LLM call N, 0 or more."""
    return _option("--llm-until", panel=panel, min=0, metavar="N", help=help, show_default=False)


def history(
    help: str = "A multi-turn case's later turns get the recorded answers (default) or the "
    "agent's own (replayed).",
    panel: str | None = None,
) -> Any:
    """``--history recorded|replayed`` (``HistoryOption``; unset: recorded)."""
    return _option("--history", panel=panel, help=help, show_default=False)


def in_process(
    help: str = "Run the agent in this process (threads), for a debugger: a crash ends the "
    "eval, a case past --timeout is abandoned, not stopped.",
    panel: str | None = None,
) -> Any:
    """``--in-process``: the agent runs in the command's own process."""
    return _option("--in-process", panel=panel, help=help)


def timeout(help: str, panel: str | None = None, show_default: bool = True) -> Any:
    """``--timeout SECONDS``: per attempt of a case, 0 or more (0: no limit)."""
    return _option("--timeout", panel=panel, min=0.0, help=help, show_default=show_default)


def json_file(help: str, panel: str | None = None, metavar: str | None = None) -> Any:
    """``--json FILE``: the results as JSON (the document ``eval --json`` writes)."""
    return _option("--json", panel=panel, metavar=metavar, help=help)


def fail_under(panel: str | None = None, help: str | None = None) -> Any:
    """``--fail-under RATE``: the pass-rate gate (percent; checked by ``check_gates``)."""
    return _option(
        "--fail-under",
        panel=panel,
        metavar="RATE",
        show_default=False,
        help=help
        or "A gate: exit 1 only when the pass rate (percent, 0-100) is below RATE, 0 "
        "otherwise even if cases failed (e.g. --fail-under 90).",
    )


def max_regressions(panel: str | None = None, help: str | None = None) -> Any:
    """``--max-regressions N``: the regression gate (checked by ``check_gates``)."""
    return _option(
        "--max-regressions",
        panel=panel,
        metavar="N",
        show_default=False,
        help=help
        or "A gate: exit 1 when more than N cases that passed in the baseline (the suite's "
        "latest completed eval run before this one) do not pass now. With --repeat and a "
        "repeated baseline, a regression counts only when significant: Fisher's exact test on "
        "its passes and fails, p < 0.05.",
    )
