"""``tracereplay runs`` and ``tracereplay show``: list and inspect stored agent runs."""

from __future__ import annotations

import sys
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import orjson
import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path, err_console, parse_since, short_ids
from tracereplay.cli.run_view import render_run
from tracereplay.models import RUN_STATUSES

_JSON_COLUMNS = {"context", "parameters", "models", "result"}


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


class RunStatus(str, Enum):
    success = "success"
    failed = "failed"
    max_rounds_exceeded = "max_rounds_exceeded"


class LabelVerdict(str, Enum):
    good = "good"
    bad = "bad"


class RunKind(str, Enum):
    live = "live"
    replay = "replay"
    all = "all"


assert {s.value for s in RunStatus} == set(RUN_STATUSES)


def runs(
    status: Annotated[
        Optional[RunStatus],
        typer.Option(
            metavar="STATUS",
            help="Only runs with this status: success, failed or max_rounds_exceeded.",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        Optional[str],
        typer.Option(
            metavar="NAME", help="Only runs of this agent (exact name).", show_default=False
        ),
    ] = None,
    since: Annotated[
        Optional[str],
        typer.Option(
            metavar="WHEN",
            help="Only runs started since: a duration back from now (30m, 12h, 7d) or an ISO date.",
            show_default=False,
        ),
    ] = None,
    kind: Annotated[
        RunKind,
        typer.Option(
            help="live: what production agents did; replay: the runs `eval --agent` made; all.",
        ),
    ] = RunKind.live,
    monitor: Annotated[
        Optional[str],
        typer.Option(metavar="NAME", help="Only runs this monitor judged.", show_default=False),
    ] = None,
    failing: Annotated[
        bool,
        typer.Option("--failing", help="Only runs a monitor (--monitor, else any) judged FAILED."),
    ] = False,
    label: Annotated[
        Optional[LabelVerdict],
        typer.Option(
            metavar="VERDICT",
            help="Only runs whose latest label (`tracereplay label`) is this: bad or good.",
            show_default=False,
        ),
    ] = None,
    session: Annotated[
        Optional[str],
        typer.Option(
            metavar="ID",
            help="Only the turns of this session (conversation), in order: oldest first.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int,
        typer.Option(
            min=1, max=10**9, help="At most this many runs, newest first (--session: the first)."
        ),
    ] = 50,
    wide: Annotated[
        bool, typer.Option("--wide", help="Whole run ids and every column, however wide.")
    ] = False,
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="table, or json: an array of objects keyed by the runs table's columns.",
        ),
    ] = OutputFormat.table,
) -> None:
    """List agent runs, newest first (production runs unless --kind says otherwise).

    Run ids are shown as their shortest unique prefix (at least 8 characters, as git does):
    type one back to `show` or `promote`. --wide or --format json give them whole.

    [bold]Examples[/bold]

      tracereplay runs --status failed --since 1d
      tracereplay runs --kind all --wide
      tracereplay runs --agent weather_agent --format json | jq '.[0].run_id'
      tracereplay runs --monitor answers --failing
      tracereplay runs --label bad
      tracereplay runs --session conv-7     # a conversation's turns, in order
    """
    started = parse_since(since) if since is not None else None
    from tracereplay.store.open import open_store  # the store (duckdb, pyarrow) only once needed
    from tracereplay.store.runs import list_runs

    with open_store(db_path()) as store:
        if monitor is not None:
            from tracereplay.monitor.records import get_monitor

            get_monitor(store, monitor)  # an unknown name is an error, not "no runs"
        rows = list_runs(
            store,
            status=status.value if status is not None else None,
            agent=agent,
            kind=None if kind is RunKind.all else kind.value,
            since=started,
            monitor=monitor,
            failing=failing,
            label=label.value if label is not None else None,
            session=session,
            limit=limit,
        )
        if session is not None:
            _number_turns(store, session, rows)
        short = {} if wide else short_ids(store, "runs", "run_id", [r["run_id"] for r in rows])
    if fmt is OutputFormat.json:
        for row in rows:
            for col in _JSON_COLUMNS & row.keys():
                if row[col] is not None:
                    row[col] = orjson.loads(row[col])
        sys.stdout.write(
            orjson.dumps(rows, option=orjson.OPT_INDENT_2, default=_json_default).decode() + "\n"
        )
        return
    if not rows:
        what = "" if kind is RunKind.all else f" {kind.value}"
        hint = "" if kind is not RunKind.live else " (--kind replay or all for eval replays)"
        console.print(f"no{what} runs match{hint}", style="dim", markup=False)
        return
    console.print(
        _runs_table(
            rows,
            None if wide else console.width,
            short,
            kind is not RunKind.live,
            turns=session is not None,
        )
    )


def _number_turns(store: Any, session: str, rows: list[dict[str, Any]]) -> None:
    """Each row's ``turn``: its 1-based place among its session's turns of its kind (other
    filters leave turns out, not renumber them)."""
    from tracereplay.store.sessions import session_turns

    numbers: dict[str, int] = {}
    for kind in {r["kind"] for r in rows}:
        for number, turn in enumerate(session_turns(store, session, kind), 1):
            numbers[turn["run_id"]] = number
    for row in rows:
        row["turn"] = numbers.get(row["run_id"])


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError


_STATUS_STYLE = {"success": "green", "failed": "red", "max_rounds_exceeded": "yellow"}
#: max_rounds_exceeded is too wide for an 80-column table
_STATUS_TEXT = {"max_rounds_exceeded": "max_rounds"}


def _runs_table(
    rows: list[dict[str, Any]],
    width: int | None,
    short: dict[str, str],
    with_kind: bool,
    turns: bool = False,
) -> Table:
    """The runs as a table that fits ``width`` (``None``: every column, ids whole): short run
    ids, then status, then the optional columns as room allows, the query taking the rest;
    ``turns``: the rows are a session's turns, numbered first."""
    optional = [  # (header, cell, width), most useful first
        ("kind", lambda r: Text(r["kind"] or "", style="dim" if r["kind"] == "replay" else ""), 6),
        ("started (UTC)", lambda r: r["started_at"].strftime("%m-%d %H:%M") if r["started_at"] else "", 13),
        ("agent", lambda r: Text(r["agent_name"] or ""), 14),
        ("ms", lambda r: f"{r['duration_ms'] or 0:.0f}", 6),
        ("tools", lambda r: str(r["tool_calls_count"] or 0), 5),
        ("llm", lambda r: str(r["total_llm_calls"] or 0), 3),
        ("tokens", lambda r: f"{r['input_tokens'] or 0}/{r['output_tokens'] or 0}", 9),
    ]  # fmt: skip
    if not with_kind:
        optional = optional[1:]
    if width is None:
        optional[1 if with_kind else 0] = (
            "started (UTC)",
            lambda r: r["started_at"].strftime("%Y-%m-%d %H:%M:%S") if r["started_at"] else "",
            19,
        )
    id_width = max((len(short.get(r["run_id"], r["run_id"])) for r in rows), default=8)
    budget = (width or 10_000) - (id_width + 2 + 10 + 2 + 20)  # id, status, a readable query
    budget -= 6 if turns else 0
    chosen = []
    for column in optional:
        if budget >= column[2] + 2:
            chosen.append(column)
            budget -= column[2] + 2
    table = Table(header_style="bold", box=None, pad_edge=False, expand=width is not None)
    if turns:
        table.add_column("turn", no_wrap=True, justify="right")
    table.add_column("run", no_wrap=True, style="cyan", min_width=id_width)
    table.add_column("status", no_wrap=True, min_width=6)
    for header, _, est in chosen:
        justify = "left" if header in ("kind", "started (UTC)", "agent") else "right"
        table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=est, justify=justify)
    table.add_column("query", overflow="ellipsis", no_wrap=True, min_width=10, ratio=1)
    for r in rows:
        status = r["status"] or ""
        table.add_row(
            *([str(r.get("turn") or "")] if turns else []),
            Text(short.get(r["run_id"], r["run_id"])),
            Text(_STATUS_TEXT.get(status, status), style=_STATUS_STYLE.get(status, "")),
            *(cell(r) for _, cell, _ in chosen),
            Text(" ".join((r["query"] or "").split())),
        )
    return table


def show(
    run_id: Annotated[
        str, typer.Argument(help="A run id, a unique prefix of one, or a trace id holding one run.")
    ],
) -> None:
    """Show one run as a tree: query, each LLM round with its tool calls, the response.

    A run that did not succeed has the LLM round or tool call where it stopped marked ✗. A
    turn of a conversation shows its session, its turn number and the turns around it.

    [bold]Example[/bold]

      tracereplay show 3f2a        # any unique prefix works, as with git
    """
    from tracereplay.cli.content_notes import run_note
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        run = store.get_run(run_id)
        note = run_note(store, run)
        replay = replay_report_of(store, run.run_id) if run.kind == "replay" else None
        turns = _turn_fields(store, run)
    fork = replay.llm.fork_round if replay is not None and replay.llm is not None else None
    console.print(render_run(run, console.width, fork_round=fork, turns=turns))
    if replay is not None:
        from tracereplay.evaluate.formats.notes import tool_result_notes

        for line in tool_result_notes(replay):
            console.print(Text(line, style="dim"))
    if note is not None:
        err_console.print(f"note: {note}", style="yellow", markup=False, soft_wrap=True)


def _turn_fields(store: Any, run: Any) -> list[tuple[str, str, str]] | None:
    """``show``'s line of the run's place in its session: the session, turn N of M, the ids
    (shortest unique prefixes) of the turns before and after it; None for no turn."""
    from tracereplay.store.sessions import turn_place

    place = turn_place(store, run.run_id, run)
    if place is None:
        return None
    around = [i for i in (place.previous, place.next) if i is not None]
    short = short_ids(store, "runs", "run_id", around)
    fields = [
        ("session", place.session_id, "bold"),
        ("turn", f"{place.number} of {place.count}", ""),
    ]
    if place.previous is not None:
        fields.append(("previous", short[place.previous], "cyan"))
    if place.next is not None:
        fields.append(("next", short[place.next], "cyan"))
    return fields


def replay_report_of(store: Any, run_id: str) -> Any:
    """The stored replay report (``case_results.drift``) of the replay that made ``run_id``:
    where a fork left the recording, the tool-result drift; None when there is none."""
    from tracereplay.scoring.outcomes import ReplayReport
    from tracereplay.store.eval_runs import replay_drift

    drift = replay_drift(store, run_id)
    return ReplayReport.model_validate_json(drift) if drift is not None else None


def register(app: typer.Typer) -> None:
    app.command("runs")(runs)
    app.command("show")(show)
