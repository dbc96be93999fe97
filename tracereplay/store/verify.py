"""``tracereplay check``: read a whole store so that every block's checksum is verified.

DuckDB verifies a block's checksum when it reads the block, and a query reads only the blocks
its columns and row groups need; so ``verify_store`` reads every column of every table
(``bit_xor(hash(COLUMNS(*)))``: each value decoded, nothing kept, memory flat), compares the
file's size with the blocks its header counts, checks the schema version, and reads every record
of every spool segment (their CRC32s). A table's index blocks (the few small tables with keys)
are not walked. Damage in the file is left as the damage note (``store/damage.py``), which is
cleared when the file is whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tracereplay.errors import one_line
from tracereplay.store import damage, schema, spool
from tracereplay.store.db import Store
from tracereplay.store.errors import StatementError


@dataclass
class Finding:
    part: str  # "file", "schema", a table's name, "spool"
    ok: bool
    detail: str


@dataclass
class CheckReport:
    path: Path
    findings: list[Finding] = field(default_factory=list)

    @property
    def damaged(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    @property
    def damaged_file(self) -> list[Finding]:
        """Damage in the DuckDB file. (A damaged spool record is not: the drain sets its
        segment aside as ``.corrupt`` and stores the rest.)"""
        return [f for f in self.damaged if f.part != "spool"]


def verify_store(store: Store) -> CheckReport:
    """Every check on ``store`` (opened with ``damaged_ok``); records or clears the note."""
    report = CheckReport(store.path)
    con = store.con
    cut = damage.truncation(con, store.path)
    size = store.path.stat().st_size
    report.findings.append(Finding("file", cut is None, cut or f"{size} bytes, complete"))
    report.findings.append(_schema(con))
    for table in _tables(con):
        report.findings.append(_read_table(con, table))
    report.findings.append(_spool(store.spool_dir))
    in_file = report.damaged_file
    if in_file:
        damage.record(store.path, "; ".join(f"{f.part}: {f.detail}" for f in in_file))
    else:
        damage.clear(store.path)
    return report


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND NOT temporary ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows]


def _schema(con: duckdb.DuckDBPyConnection) -> Finding:
    try:
        version = schema.current_version(con)
    except (StatementError, duckdb.Error) as exc:
        return Finding("schema", False, f"its version cannot be read: {one_line(exc)}")
    latest = schema.LATEST_VERSION
    if version > latest:
        return Finding("schema", True, f"version {version}, made by a newer tracereplay")
    if version < latest:
        return Finding("schema", True, f"version {version} (upgraded to {latest} when next opened)")
    return Finding("schema", True, f"version {version} (current)")


def _read_table(con: duckdb.DuckDBPyConnection, table: str) -> Finding:
    quoted = '"' + table.replace('"', '""') + '"'
    try:
        rows = con.execute(f"SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM {quoted}").fetchall()
    except (StatementError, duckdb.Error) as exc:  # the store's, or DuckDB's reading its rows
        return Finding(table, False, one_line(exc))
    return Finding(table, True, f"{rows[0][0]} rows read")


def _spool(directory: Path) -> Finding:
    segments = spool.list_segments(directory)
    records = total = 0
    problems = []
    for segment in segments:
        offset = 0
        while True:
            got = spool.read_records(segment, offset)
            records += len(got.records)
            total += sum(len(p) for _, p in got.records)
            if got.corrupt:
                problems.append(got.corrupt)
                break
            if got.end_offset == offset:
                break
            offset = got.end_offset
    set_aside = sorted(p.name for p in directory.glob(f"*{spool.CORRUPT_SUFFIX}"))
    summary = f"{len(segments)} segments, {records} records ({total} bytes) not yet stored"
    if set_aside:
        summary += f"; set aside earlier: {', '.join(set_aside)}"
    if problems:
        return Finding("spool", False, f"{'; '.join(problems)} ({summary})")
    return Finding("spool", True, summary)
