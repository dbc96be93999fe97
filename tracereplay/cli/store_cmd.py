"""``tracereplay store``: create a store (``init``), move one into another (``copy --to``)."""

from __future__ import annotations

from typing import Annotated

import typer

from tracereplay.cli.common import console, db_path

store_app = typer.Typer(
    help="The store itself: create it (init), copy it into another store (copy --to URL).",
    no_args_is_help=True,
)


@store_app.command("init")
def init() -> None:
    """Create the store (or bring its schema up to date) and print its schema version.

    Works on a DuckDB file (--db) and on a PostgreSQL database (--store postgresql://...);
    every command migrates the store it opens anyway, this does only that.

    [bold]Example[/bold]

      tracereplay --store postgresql://tr@db:5432/tr store init

    Exit codes: 0 done, 2 the store cannot be opened or reached.
    """
    from tracereplay.store import schema
    from tracereplay.store.db import Store

    target = db_path(create=True)
    with Store.open(target) as store:
        version = schema.current_version(store.con)
        where = getattr(target, "shown", str(target))
        console.print(
            f"store {where} ({store.engine}) at schema version {version}",
            markup=False,
            soft_wrap=True,
        )


@store_app.command("copy")
def copy(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The store to copy into: a PostgreSQL URL or a DuckDB file; it must be empty.",
            show_default=False,
        ),
    ],
) -> None:
    """Copy the whole store (--db / --store) into another, empty store (--to), in one
    transaction of the target: spans, logs, runs, suites, cases, eval results, monitors.

    [bold]Example[/bold]

      tracereplay store copy --to postgresql://tr@db:5432/tr

    Exit codes: 0 done, 2 a store cannot be opened, or the target is not empty.
    """
    from tracereplay.store.copying import copy_store
    from tracereplay.store.db import Store
    from tracereplay.store.open import open_store
    from tracereplay.store.paths import resolve_db_path

    target_path = resolve_db_path(to)
    with open_store(db_path()) as source, Store.open(target_path) as target:
        copied = copy_store(source, target)
    rows = sum(c.rows for c in copied)
    where = getattr(target_path, "shown", str(target_path))
    console.print(
        f"copied {rows} rows of {len(copied)} tables into {where}", markup=False, soft_wrap=True
    )
    for c in copied:
        console.print(f"  {c.table:<20} {c.rows:>10}", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
