"""``tracereplay replay RUN_ID --agent ...``: replay one recorded run without promoting it first.

The run becomes a case of the suite ``replay:<agent name>`` (created with the default checks on
first use; replaying the same run again reuses its case, as ``promote`` does), and that one case
is evaluated as ``eval SUITE --case ID --agent ...`` would: the eval run, the case's result, its
stored replay report (``case_results.drift``) and the replay run are stored like any eval's, so
``show``, ``diff`` and the report work on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tracereplay.cli import options
from tracereplay.cli.common import console, db_path
from tracereplay.cli.eval_view import (
    print_problems,
    print_summary,
    results_table,
)
from tracereplay.cli.options import LlmMatchOption, LlmOption, ToolMatchOption
from tracereplay.errors import BadParameterError
from tracereplay.evaluate.formats.json import write_json

#: the suite a replayed run's case is stored in: ``replay:`` and the run's agent name
SUITE_PREFIX = "replay:"


def replay_suite_name(agent_name: str) -> str:
    """The suite ``tracereplay replay`` stores a run of ``agent_name`` in."""
    return SUITE_PREFIX + (agent_name.strip() or "unnamed")


def replay(
    run_id: Annotated[
        str,
        typer.Argument(metavar="RUN_ID", help="A run id or a unique prefix of one."),
    ],
    agent: Annotated[
        Optional[str],
        options.agent(
            "The agent to replay the run with (as for eval --agent).", metavar="MODULE:ATTR"
        ),
    ] = None,
    agent_cmd: Annotated[
        Optional[str], options.agent_cmd(help="Or a command, any language (as eval --agent-cmd).")
    ] = None,
    agent_call: Annotated[Optional[str], options.agent_call()] = None,
    llm: Annotated[
        Optional[LlmOption],
        options.llm(
            "live (default) calls the agent's model; recorded answers its LLM calls from "
            "the run's recording."
        ),
    ] = None,
    llm_until: Annotated[
        Optional[int],
        options.llm_until(
            "With --llm recorded: fork at LLM call N (the first N answered from the "
            "recording, the later ones live)."
        ),
    ] = None,
    llm_match: Annotated[
        Optional[LlmMatchOption], options.llm_match("As for eval --llm-match.")
    ] = None,
    live_tools: Annotated[
        bool,
        options.live_tools(
            "Run the real tool for a call no recording answers; with --llm recorded, "
            "every tool, each result compared with the recorded one."
        ),
    ] = False,
    tool_match: Annotated[
        Optional[ToolMatchOption], options.tool_match("As for eval --tool-match.")
    ] = None,
    in_process: Annotated[
        bool, options.in_process("Run the agent in this process (a debugger works).")
    ] = False,
    timeout: Annotated[
        float, options.timeout("Seconds the replay may take before it is an ERROR (0: none).")
    ] = 60.0,
    json_file: Annotated[
        Optional[Path],
        options.json_file("Write the result as JSON (as eval --json).", metavar="FILE"),
    ] = None,
) -> None:
    """Replay one recorded run with an agent and print the verdict and drift, as eval does.

    The run is stored as a case of suite replay:AGENT_NAME (reused when replayed again); the
    eval run and replay run are stored like any eval's. Exit code 0 when it passed, 1 otherwise.

    [bold]Examples[/bold]

      tracereplay replay 3f2a --agent my_agent:run --llm recorded
      tracereplay replay 3f2a --agent my_agent:run_v2 --llm recorded --llm-until 2
      tracereplay replay 3f2a --agent-cmd "node agent.mjs" --llm recorded
    """
    from tracereplay.evaluate.settings import check_options, eval_settings

    if agent is None and agent_cmd is None:
        raise BadParameterError(
            "replay needs the agent: --agent MODULE:ATTR or --agent-cmd COMMAND"
        )
    check_options(
        agent=agent,
        agent_cmd=agent_cmd,
        agent_call=agent_call,
        tool_match=tool_match,
        live_tools=live_tools,
        in_process=in_process,
        llm=llm,
        llm_match=llm_match,
        llm_until=llm_until,
    )
    from tracereplay.cli.eval_progress import BarProgress
    from tracereplay.evaluate.evaluation import run_evaluation
    from tracereplay.promote import promote_run
    from tracereplay.scoring.runner import RunnerOptions
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        resolved = store.resolve_run_id(run_id)
        source = store.get_run(resolved)
        suite = replay_suite_name(source.agent_name)
        case = promote_run(store, resolved, suite_name=suite).case
    settings = eval_settings(
        suite,
        db_path(),
        agent=agent,
        agent_cmd=agent_cmd,
        agent_call=agent_call,
        tool_match=tool_match,
        live_tools=live_tools,
        llm=llm,
        llm_match=llm_match,
        llm_until=llm_until,
        in_process=in_process,
        runner=RunnerOptions(concurrency=1, timeout_s=timeout or None, retries=0),
        case_ids=(case.id,),
        label=f"replay of run {source.run_id}",
    )
    outcome = run_evaluation(settings, BarProgress(f"replay {source.run_id[:8]}"))
    console.print(results_table(list(outcome.reports), False))
    print_problems(outcome.needing_attention())
    print_summary(outcome)
    if json_file is not None:
        write_json(json_file, outcome)
    raise typer.Exit(outcome.exit_code)


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
