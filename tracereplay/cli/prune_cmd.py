"""``tracereplay prune``: drop traffic older than a cutoff, keep what suites and evals use."""

from __future__ import annotations

from typing import Annotated

import typer

from tracereplay.cli.common import console, db_path, parse_since
from tracereplay.errors import BadParameterError, StoreError


def prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            help="Remove traces whose every span started before this: a duration back from "
            "now (90d, 12w) or an ISO date.",
            show_default=False,
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only count what would go; change nothing.")
    ] = False,
) -> None:
    """Remove old spans, logs and runs (with their tool and LLM calls), then shrink the file.

    Kept however old: every run a case was promoted from, every run an eval run refers to
    (with their whole traces), and all suites, cases and eval results. Safe while serve runs:
    it holds the store's lock, so drains wait (see docs/cli.md for what it costs).

    [bold]Example[/bold]

      tracereplay prune --older-than 90d --dry-run

    Exit codes: 0 done, 2 bad input (a bad --older-than, no store) or a damaged store.
    """
    from tracereplay.store.engines import is_server_url
    from tracereplay.store.engines.duckdb import store_failure
    from tracereplay.store.open import open_store
    from tracereplay.store.prune import compact
    from tracereplay.store.prune import prune as prune_store

    try:
        cutoff = parse_since(older_than)
    except BadParameterError:
        raise BadParameterError(
            f"--older-than '{older_than}' is neither a duration (90d, 12w) nor an ISO date"
        ) from None
    path = db_path()
    with open_store(path) as store:
        counts = prune_store(store, cutoff, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    console.print(
        f"{verb} {counts.traces} traces before {cutoff:%Y-%m-%d %H:%M} UTC: {counts.spans} spans, "
        f"{counts.logs} log records, {counts.runs} runs ({counts.tool_calls} tool calls, "
        f"{counts.llm_calls} LLM calls); kept {counts.kept_runs} older runs that cases, "
        "eval runs or labels refer to"
        + (f"; {counts.partitions} whole days of spans dropped" if counts.partitions else ""),
        markup=False,
        soft_wrap=True,
    )
    if dry_run or is_server_url(str(path)):
        return  # a server gives freed space back itself (autovacuum): nothing to compact
    import duckdb

    try:
        before, after = compact(path)
    except duckdb.Error as exc:
        failure = store_failure(path, exc)
        raise (failure or StoreError(f"cannot compact {path}: {exc}")) from None
    console.print(
        f"{path}: {before / 2**20:.1f} MiB -> {after / 2**20:.1f} MiB", markup=False, soft_wrap=True
    )


def register(app: typer.Typer) -> None:
    app.command("prune")(prune)
