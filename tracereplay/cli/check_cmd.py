"""``tracereplay check``: verify a whole store (every block read, the schema, the spool)."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path


def check() -> None:
    """Read the whole store so every block's checksum is verified; check the schema version
    and every spool record. Takes the store's lock (safe while serve runs; its drains wait).

    A damaged store is then refused by every command until check finds it whole again.

    [bold]Example[/bold]

      tracereplay --db traces.duckdb check

    Exit codes: 0 whole, 2 damaged (one line saying what, and the recovery) or no store.
    """
    from tracereplay.errors import BadParameterError
    from tracereplay.store.damage import damaged
    from tracereplay.store.db import Store
    from tracereplay.store.engines import is_server_url
    from tracereplay.store.paths import spool_dir
    from tracereplay.store.verify import verify_store

    path = db_path(create=False)
    if is_server_url(str(path)):
        raise BadParameterError(
            "check reads a DuckDB file block by block; a PostgreSQL store's blocks are the"
            " server's to verify (data checksums, pg_amcheck)"
        )
    with Store.open(path, create=False, damaged_ok=True) as store:
        report = verify_store(store)
    table = Table(header_style="bold", pad_edge=False)
    table.add_column("part")
    table.add_column("state")
    table.add_column("found", overflow="fold")
    for f in report.findings:
        table.add_row(Text(f.part), Text("ok" if f.ok else "DAMAGED"), Text(f.detail))
    console.print(table)
    bad = report.damaged_file or report.damaged
    if bad:
        where = path if report.damaged_file else spool_dir(path)
        raise damaged(where, "; ".join(f"{f.part}: {f.detail}" for f in bad))
    console.print(f"{path}: no damage found", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
