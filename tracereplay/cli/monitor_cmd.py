"""``tracereplay monitor``: production runs judged as they arrive (create, list, show, remove,
run, status)."""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path, parse_since
from tracereplay.errors import BadParameterError


class StatusFormat(str, Enum):
    table = "table"
    json = "json"


monitor_app = typer.Typer(
    name="monitor",
    help="Monitors: checks applied to production runs as they arrive (create, run, status).",
    no_args_is_help=True,
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


@monitor_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="The monitor's name (letters, digits, _ - .).")],
    checks: Annotated[
        Path,
        typer.Option(
            "--checks",
            metavar="FILE",
            help="YAML or JSON file with a `checks:` list written as in a suite file "
            "(it may also give agent, service, where, sample).",
        ),
    ],
    where: Annotated[
        Optional[str],
        typer.Option(metavar="SQL", help="Only runs for which this predicate over runs holds."),
    ] = None,
    agent: Annotated[
        Optional[str], typer.Option(metavar="NAME", help="Only runs of this agent.")
    ] = None,
    service: Annotated[
        Optional[str], typer.Option(metavar="NAME", help="Only runs of this service.")
    ] = None,
    sample: Annotated[
        Optional[float],
        typer.Option(
            metavar="RATE",
            help="Share of the selected runs judged, 0 < RATE <= 1 (by run id hash) [default: 1].",
        ),
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace a monitor of the same name.")
    ] = False,
) -> None:
    """Create a monitor: its checks judge every new live run its selector and sample take.

    Options given here win over the same fields in FILE. `monitor show NAME` prints the monitor
    as a file to keep under version control.

    [bold]Example[/bold]

      tracereplay monitor create answers --checks monitor.yaml --sample 0.1
    """
    from tracereplay.monitor.definition import Monitor, read_monitor_file
    from tracereplay.monitor.records import save_monitor
    from tracereplay.store.open import open_store

    try:
        text = checks.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadParameterError(f"--checks {checks} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadParameterError(f"cannot read --checks {checks}: {exc}") from None
    specs, fields = read_monitor_file(text, str(checks))
    given = {"agent": agent, "service": service, "where": where, "sample": sample}
    fields.update({k: v for k, v in given.items() if v is not None})
    monitor = Monitor(name=name, checks=specs, **fields)
    with open_store(db_path()) as store:
        replaced = save_monitor(store, monitor, replace=replace, check=_check_where)
    verb = "replaced" if replaced else "created"
    console.print(
        f"{verb} monitor {name}: {len(specs)} check(s) on {monitor.selector}; "
        f"`tracereplay monitor run {name}` judges the runs stored already",
        markup=False,
    )


def _check_where(store, monitor) -> None:  # noqa: ANN001 (Store, Monitor: imported lazily)
    """A ``--where`` DuckDB rejects fails before anything is stored."""
    from tracereplay.monitor.selection import selected_run_ids

    selected_run_ids(store, monitor, pending=False, traces=[])


@monitor_app.command("list")
def list_() -> None:
    """List the monitors: checks, selector, runs judged, pass rate.

    [bold]Example[/bold]

      tracereplay monitor list
    """
    from tracereplay.monitor.records import list_monitors
    from tracereplay.store.monitors import pass_rates
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        monitors = list_monitors(store)
        rates = {r["monitor"]: r for r in pass_rates(store)}
    if not monitors:
        console.print("no monitors (`tracereplay monitor create`)", style="dim", markup=False)
        return
    table = Table(header_style="bold", box=None, pad_edge=False)
    for header in ("monitor", "checks", "selector", "runs", "pass rate"):
        table.add_column(header, justify="right" if header in ("runs", "pass rate") else "left")
    for m in monitors:
        r = rates.get(m.name, {})
        table.add_row(
            Text(m.name, style="cyan"),
            Text(", ".join(c.label for c in m.checks)),
            Text(m.selector),
            str(r.get("runs", 0)),
            _pct(r.get("pass_rate")),
        )
    console.print(table)


@monitor_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The monitor's name.")],
) -> None:
    """Print a monitor as a file (YAML): what `monitor create NAME --checks FILE` reads back.

    [bold]Example[/bold]

      tracereplay monitor show answers > monitors/answers.yaml
    """
    from tracereplay.monitor.records import get_monitor
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        monitor = get_monitor(store, name)
    typer.echo(monitor.dump(), nl=False)


@monitor_app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="The monitor's name.")],
    keep_results: Annotated[
        bool, typer.Option("--keep-results", help="Keep its rows in monitor_results.")
    ] = False,
) -> None:
    """Remove a monitor (and its results, unless --keep-results).

    [bold]Example[/bold]

      tracereplay monitor remove answers
    """
    from tracereplay.monitor.records import remove_monitor
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        removed = remove_monitor(store, name, keep_results=keep_results)
    console.print(f"removed monitor {name} ({removed} result row(s) removed)", markup=False)


@monitor_app.command("run")
def run(
    name: Annotated[
        Optional[str], typer.Argument(help="One monitor (default: every monitor).")
    ] = None,
    since: Annotated[
        Optional[str],
        typer.Option(
            metavar="WHEN",
            help="Only runs started since: 30m, 12h, 7d or an ISO date (default: all).",
        ),
    ] = None,
    max_judge_calls: Annotated[
        Optional[int],
        typer.Option(
            "--max-judge-calls-per-minute", min=1, metavar="N", help="Pace llmJudge calls."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing.")] = False,
    background: Annotated[
        bool,
        typer.Option(
            "--background",
            help="As the embedded default starts it: do nothing when another such round "
            "waits already.",
        ),
    ] = False,
) -> None:
    """Judge the stored live runs the monitors have not judged (a backfill), and runs
    re-converted since they were judged (a late span).

    [bold]Example[/bold]

      tracereplay monitor run answers --since 1d
    """
    from tracereplay.monitor.embedded import CHILD_ENV
    from tracereplay.monitor.limiter import JudgeLimiter
    from tracereplay.monitor.rounds import score_pending
    from tracereplay.store.open import open_store

    os.environ[CHILD_ENV] = "1"  # this round judges what its own drain stores: no other
    path = db_path()
    cutoff = parse_since(since) if since is not None else None

    def round_(on_locked=None):  # noqa: ANN001, ANN202
        return score_pending(
            path,
            JudgeLimiter(max_judge_calls),
            names=[name] if name else None,
            since=cutoff,
            opener=open_store,
            lock_timeout=3600.0 if background else 600.0,
            on_locked=on_locked,
        )

    if background:
        from tracereplay.monitor.embedded import background_round

        stats = background_round(path, round_)
        if stats is None:
            return
    else:
        stats = round_()
    if not quiet:
        console.print(
            f"judged {stats.runs} run(s): {stats.failing} failing, {stats.checks} check(s), "
            f"{stats.judge_calls} judge call(s)",
            markup=False,
        )


@monitor_app.command("status")
def status(
    name: Annotated[str, typer.Argument(help="The monitor's name.")],
    since: Annotated[
        Optional[str],
        typer.Option(metavar="WHEN", help="Runs started since: 30m, 1h, 7d or an ISO date."),
    ] = None,
    max_failure_rate: Annotated[
        Optional[float],
        typer.Option(
            min=0.0,
            max=1.0,
            metavar="RATE",
            help="Exit 1 when the share of failing runs is above RATE (0..1).",
        ),
    ] = None,
    fmt: Annotated[
        StatusFormat,
        typer.Option("--format", "-f", help="table, or json: the same numbers for scripts."),
    ] = StatusFormat.table,
) -> None:
    """Runs judged, pass rate and the worst checks of a monitor; for cron and CI.

    A run fails when one of its checks FAILED; a run whose checks could not all be carried
    out (ERROR, e.g. a judge down) and none failed is counted apart, not as failing.

    It also says how often the monitor agreed with people's labels (`tracereplay label`): of
    the judged runs with a label, those it PASSED labelled good or FAILED labelled bad.

    Exit codes: 0 done (and within --max-failure-rate), 1 the failing share is above
    --max-failure-rate, 2 bad input.

    [bold]Example[/bold]

      tracereplay monitor status answers --since 1h --max-failure-rate 0.05
    """
    from tracereplay.monitor.records import get_monitor
    from tracereplay.monitor.status import monitor_status
    from tracereplay.store.open import open_store

    cutoff = parse_since(since) if since is not None else None
    with open_store(db_path()) as store:
        get_monitor(store, name)
        st = monitor_status(store, name, cutoff)
    too_many = max_failure_rate is not None and (st.failure_rate or 0.0) > max_failure_rate
    if fmt is StatusFormat.json:
        data = {
            "monitor": name, "since": cutoff.isoformat() if cutoff else None, "runs": st.runs,
            "passed": st.passed, "failed": st.failed, "errored": st.errored,
            "pass_rate": st.pass_rate, "failure_rate": st.failure_rate,
            "max_failure_rate": max_failure_rate, "over_max_failure_rate": too_many,
            "checks": st.worst, "labelled_runs": st.labelled, "agreed_with_labels": st.agreed,
        }  # fmt: skip
        typer.echo(json.dumps(data, indent=2, default=str))
        if too_many:
            raise typer.Exit(1)
        return
    window = f" since {since}" if since else ""
    console.print(
        f"monitor {name}{window}: {st.runs} run(s) judged, {st.passed} passed, {st.failed} "
        f"failed, {st.errored} error; pass rate {_pct(st.pass_rate)}, failing "
        f"{_pct(st.failure_rate)}",
        markup=False,
    )
    console.print(
        f"people's labels: agreed {st.agreed} of {st.labelled} labelled runs"
        + ("" if st.labelled else " (label runs with `tracereplay label RUN --bad|--good`)"),
        markup=False,
    )
    if st.worst:
        table = Table(header_style="bold", box=None, pad_edge=False)
        for header in ("check", "runs", "failed", "error", "pass rate", "last reason"):
            table.add_column(
                header,
                justify="left" if "check" in header or "reason" in header else "right",
                no_wrap=header != "last reason",
                overflow="ellipsis",
            )
        for row in st.worst:
            table.add_row(
                Text(row["check_name"], style="cyan"),
                str(row["runs"]),
                str(row["failed"]),
                str(row["errored"]),
                _pct(row["pass_rate"]),
                Text(" ".join((row["last_reason"] or "").split())),
            )
        console.print(table)
    if too_many:
        console.print(
            f"failing share {_pct(st.failure_rate)} is above --max-failure-rate "
            f"{max_failure_rate:.1%}",
            style="red",
            markup=False,
        )
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(monitor_app, name="monitor")
