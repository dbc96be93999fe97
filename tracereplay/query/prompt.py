"""The interactive SQL prompt: multi-line statements ending with ``;``, line editing, a history
file and Tab completion of table, view and column names (and SQL keywords) through the
standard ``readline`` module, a few dot commands (``.tables``, ``.schema [NAME]``...).

Fed from a pipe (``tracereplay sql < queries.sql``) it runs the same way without prompts, and
reports failure in its exit status.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import TextIO

from tracereplay.errors import TraceReplayError
from tracereplay.query.sqltext import statement_complete

PROMPT = "tracereplay> "
CONTINUE = "        ...> "

HELP = """\
Enter SQL; a statement runs when a line ends with ';'. Tables and views: see .tables
  .tables          list the tables and views
  .schema [NAME]   the columns of every table and view, or of NAME (Tab completes names)
  .format FORMAT   output format: table, csv, json or jsonl (now: {fmt})
  .help            this text
  .quit / .exit    leave (or Ctrl-D)"""

TABLES_SQL = (
    "SELECT table_name AS name, lower(table_type) AS type FROM information_schema.tables"
    " WHERE table_schema = 'main' ORDER BY table_type, table_name"
)


CATALOG_SQL = (
    "SELECT t.table_name, lower(t.table_type) AS kind, c.column_name, c.data_type"
    " FROM information_schema.tables AS t JOIN information_schema.columns AS c"
    " ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema"
    " AND c.table_name = t.table_name"
    " WHERE t.table_schema = 'main' ORDER BY t.table_type, t.table_name, c.ordinal_position"
)
DOT_COMMANDS = (".tables", ".schema", ".format", ".help", ".quit", ".exit")
KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "HAVING", "LIMIT", "JOIN", "LEFT JOIN",
    "ON", "USING", "AS", "AND", "OR", "NOT", "IN", "IS NULL", "IS NOT NULL", "LIKE", "ILIKE",
    "BETWEEN", "DISTINCT", "COUNT", "WITH", "UNION ALL", "CASE", "WHEN", "THEN", "ELSE", "END",
    "DESC", "ASC", "INTERVAL", "FILTER", "OVER", "PARTITION BY", "QUALIFY", "DESCRIBE",
)  # fmt: skip


@dataclass
class Relation:
    """A table or view of the store and its columns (name, type), as ``.schema`` shows them."""

    name: str
    kind: str  # "base table" or "view"
    columns: list[tuple[str, str]] = field(default_factory=list)


def read_catalog(rows: Sequence[Sequence[str]]) -> list[Relation]:
    """Relations from ``CATALOG_SQL``'s rows (table, kind, column, type)."""
    out: dict[str, Relation] = {}
    for table, kind, column, dtype in rows:
        out.setdefault(table, Relation(table, kind)).columns.append((column, dtype))
    return list(out.values())


def load_catalog(db: str | Path) -> list[Relation]:
    """The store's tables and views with their columns (the prompt's completion and .schema)."""
    from tracereplay.store import Store

    with Store.open(db) as store:
        return read_catalog(store.con.execute(CATALOG_SQL).fetchall())


def format_schema(relations: Sequence[Relation], name: str | None, width: int = 80) -> str:
    """``.schema``: every relation with its columns wrapped to ``width``; ``.schema NAME``: one
    column a line with its type. Raises ``TraceReplayError`` for an unknown NAME."""
    if name:
        found = [r for r in relations if r.name.lower() == name.lower()]
        if not found:
            near = get_close_matches(name, [r.name for r in relations], n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            raise TraceReplayError(f"no table or view named {name} ({hint}see .tables)")
        r = found[0]
        pad = max(len(c) for c, _ in r.columns) if r.columns else 0
        lines = [f"{r.name} ({'view' if r.kind == 'view' else 'table'}, {len(r.columns)} columns)"]
        lines += [f"  {c.ljust(pad)}  {t}" for c, t in r.columns]
        return "\n".join(lines)
    lines = []
    for r in relations:
        head = f"{r.name} ({'view' if r.kind == 'view' else 'table'}):"
        line = head
        for i, (c, _) in enumerate(r.columns):
            word = c + ("," if i < len(r.columns) - 1 else "")
            if len(line) + 1 + len(word) > width and line.strip():
                lines.append(line)
                line = "   "
            line += " " + word
        lines.append(line)
    return "\n".join(lines)


_SOURCES = re.compile(
    r"\b(?:from|join)\s+([A-Za-z_][\w]*)(?:\s+(?:as\s+)?(?!(?:where|on|using|join|left|right|"
    r"inner|outer|full|cross|group|order|limit|natural|union|having|qualify|window)\b)"
    r"([A-Za-z_]\w*))?",
    re.IGNORECASE,
)


class Completer:
    """Tab completion: dot commands at the start of a line, relation names after ``.schema``,
    ``alias.`` or ``table.`` followed by that relation's columns, else the names of relations,
    the columns of the relations the statement reads (every column when it names none yet) and
    SQL keywords. The catalog is read when first needed and again after a statement ran."""

    def __init__(self, catalog: Callable[[], list[Relation]]) -> None:
        self._load = catalog
        self._catalog: list[Relation] | None = None
        self._matches: list[str] = []

    def invalidate(self) -> None:
        self._catalog = None

    def relations(self, *, strict: bool = False) -> list[Relation]:
        """The catalog (``strict``: its errors raised, else none for completion)."""
        if self._catalog is None:
            try:
                self._catalog = self._load()
            except Exception:  # noqa: BLE001 - completion must never break the prompt
                if strict:
                    raise
                return []
        return self._catalog

    def candidates(self, before: str, text: str, statement: str = "") -> list[str]:
        """What ``text`` (the word at the cursor, ``before``: the line up to it) may become;
        ``statement``: the whole statement typed so far (earlier lines included)."""
        if not before.strip() and statement.strip() in ("", text) and text.startswith("."):
            return [c + " " for c in DOT_COMMANDS if c.startswith(text)]
        rels = self.relations()
        by_name = {r.name.lower(): r for r in rels}
        if before.lstrip().startswith(".schema"):
            return [r.name for r in rels if r.name.lower().startswith(text.lower())]
        if "." in text:
            prefix, _, part = text.rpartition(".")
            aliases = {
                (alias or table).lower(): table.lower()
                for table, alias in _SOURCES.findall(statement)
            }
            rel = by_name.get(aliases.get(prefix.lower(), prefix.lower()))
            if rel is None and prefix.lower() in aliases:
                return []  # an alias of something not in the store (a CTE, a function)
            # an alias not defined yet (SELECT r.| before FROM runs r): any relation's columns
            pool = [rel] if rel is not None else rels
            names = {c for r in pool for c, _ in r.columns if c.lower().startswith(part.lower())}
            return (
                [f"{prefix}.{c}" for c in sorted(names)]
                if rel is None
                else [f"{prefix}.{c}" for c, _ in rel.columns if c.lower().startswith(part.lower())]
            )
        named = [by_name[t.lower()] for t, _ in _SOURCES.findall(statement) if t.lower() in by_name]
        columns: dict[str, None] = {}
        for r in named or rels:
            for c, _ in r.columns:
                columns[c] = None
        low = text.lower()
        names = [r.name for r in rels] + list(columns)
        out = sorted({n for n in names if n.lower().startswith(low)})
        if text:
            upper = not text.islower()
            words = [k if upper else k.lower() for k in KEYWORDS if k.lower().startswith(low)]
            out += [w for w in words if w not in out]
        return out

    def complete(self, text: str, state: int) -> str | None:
        """The ``readline`` completer."""
        if state == 0:
            import readline

            line = readline.get_line_buffer()
            before = line[: readline.get_begidx()]
            try:
                self._matches = self.candidates(before, text, self.pending + "\n" + line)
            except Exception:  # noqa: BLE001 - completion must never break the prompt
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None

    pending = ""  # the earlier lines of the statement being typed


def history_path() -> Path:
    """Where the prompt keeps its history: ``$TRACEREPLAY_HISTORY`` or ~/.tracereplay_history."""
    return Path(os.environ.get("TRACEREPLAY_HISTORY") or Path.home() / ".tracereplay_history")


class _History:
    """readline history (and completion) for a terminal session; a no-op when readline is
    missing."""

    def __init__(self, path: Path, enabled: bool, completer: Completer | None = None) -> None:
        self.path = path
        self.readline = None
        if not enabled:
            return
        try:
            import readline
        except ImportError:  # pragma: no cover - every Linux/macOS Python has it
            return
        self.readline = readline
        try:
            readline.read_history_file(str(path))
        except OSError:
            pass
        readline.set_history_length(2000)
        if completer is not None:
            readline.set_completer(completer.complete)
            readline.set_completer_delims(" \t\n()<>=!,;'\"+-*/|")
            if "libedit" in (readline.__doc__ or ""):  # macOS
                readline.parse_and_bind("bind ^I rl_complete")
            else:
                readline.parse_and_bind("tab: complete")

    def mark(self) -> int:
        return self.readline.get_current_history_length() if self.readline else 0

    def replace_since(self, start: int, statement: str) -> None:
        """Make the lines typed since ``start`` one history entry (a multi-line statement)."""
        if not self.readline:
            return
        rl = self.readline
        for pos in range(rl.get_current_history_length(), start, -1):
            rl.remove_history_item(pos - 1)
        rl.add_history(statement)

    def save(self) -> None:
        if self.readline:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.readline.write_history_file(str(self.path))
            except OSError:
                pass


def run_prompt(
    execute: Callable[[str], None],
    *,
    list_tables: Callable[[], None],
    set_format: Callable[[str], str],
    current_format: Callable[[], str],
    report_error: Callable[[str], None],
    catalog: Callable[[], list[Relation]] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Read statements until EOF or ``.quit`` and hand each complete one to ``execute``.

    ``catalog`` (the store's tables and views, e.g. ``load_catalog``) feeds ``.schema`` and, at
    a terminal, Tab completion.

    Errors (``TraceReplayError``) are reported and the session goes on. Returns the exit
    status: 0, or 2 when input came from a pipe and a statement failed.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    interactive = stdin.isatty() and stdout.isatty()
    completer = Completer(catalog) if catalog is not None else None
    history = _History(history_path(), interactive, completer)
    failed = False
    buffer: list[str] = []
    start = history.mark()
    if interactive:
        stdout.write("tracereplay SQL: end statements with ';', .help for help, Ctrl-D to leave\n")

    def run(text: str) -> None:
        nonlocal failed
        try:
            execute(text)
        except TraceReplayError as exc:
            failed = True
            report_error(str(exc))
        if completer is not None:
            completer.invalidate()  # (--write may have created or dropped a table)

    def schema(name: str) -> None:
        if completer is None:
            raise TraceReplayError(".schema is not available here (use .tables)")
        relations = completer.relations(strict=True)
        width = os.get_terminal_size(stdout.fileno()).columns if interactive else 80
        stdout.write(format_schema(relations, name or None, width) + "\n")

    try:
        while True:
            try:
                if interactive:
                    line = input(CONTINUE if buffer else PROMPT)
                else:
                    raw = stdin.readline()
                    if not raw:
                        raise EOFError
                    line = raw.rstrip("\n")
            except EOFError:
                if interactive:
                    stdout.write("\n")
                if "".join(buffer).strip():
                    run("\n".join(buffer))
                break
            except KeyboardInterrupt:
                stdout.write("\n^C (statement discarded)\n" if buffer else "\n")
                buffer.clear()
                if completer is not None:
                    completer.pending = ""
                start = history.mark()
                continue
            if not buffer and line.strip().startswith("."):
                command, _, arg = line.strip().partition(" ")
                if command in (".quit", ".exit"):
                    break
                if command == ".help":
                    stdout.write(HELP.format(fmt=current_format()) + "\n")
                elif command == ".tables":
                    run_guarded(list_tables, report_error)
                elif command == ".schema":
                    try:
                        schema(arg.strip())
                    except TraceReplayError as exc:
                        failed = True
                        report_error(str(exc))
                elif command == ".format":
                    if arg.strip():
                        try:
                            set_format(arg.strip())
                        except TraceReplayError as exc:
                            report_error(str(exc))
                    stdout.write(f"format: {current_format()}\n")
                else:
                    report_error(f"unknown command {command} (try .help)")
                start = history.mark()
                continue
            if not buffer and not line.strip():
                start = history.mark()
                continue
            buffer.append(line)
            text = "\n".join(buffer)
            if completer is not None:
                completer.pending = text
            if statement_complete(text):
                history.replace_since(start, text.replace("\n", " "))
                buffer.clear()
                if completer is not None:
                    completer.pending = ""
                run(text)
                start = history.mark()
    finally:
        history.save()
    return 2 if failed and not interactive else 0


def run_guarded(action: Callable[[], None], report_error: Callable[[str], None]) -> None:
    try:
        action()
    except TraceReplayError as exc:
        report_error(str(exc))
