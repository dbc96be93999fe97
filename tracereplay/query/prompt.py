"""The interactive SQL prompt: multi-line statements ending with ``;``, line editing and a
history file through the standard ``readline`` module, a few dot commands.

Fed from a pipe (``tracereplay sql < queries.sql``) it runs the same way without prompts, and
reports failure in its exit status.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from tracereplay.errors import TraceReplayError
from tracereplay.query.sqltext import statement_complete

PROMPT = "tracereplay> "
CONTINUE = "        ...> "

HELP = """\
Enter SQL; a statement runs when a line ends with ';'. Tables and views: see .tables
  .tables          list the tables and views
  .format FORMAT   output format: table, csv, json or jsonl (now: {fmt})
  .help            this text
  .quit / .exit    leave (or Ctrl-D)"""

TABLES_SQL = (
    "SELECT table_name AS name, lower(table_type) AS type FROM information_schema.tables"
    " WHERE table_schema = 'main' ORDER BY table_type, table_name"
)


def history_path() -> Path:
    """Where the prompt keeps its history: ``$TRACEREPLAY_HISTORY`` or ~/.tracereplay_history."""
    return Path(os.environ.get("TRACEREPLAY_HISTORY") or Path.home() / ".tracereplay_history")


class _History:
    """readline history for a terminal session; a no-op when readline is missing."""

    def __init__(self, path: Path, enabled: bool) -> None:
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
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Read statements until EOF or ``.quit`` and hand each complete one to ``execute``.

    Errors (``TraceReplayError``) are reported and the session goes on. Returns the exit
    status: 0, or 2 when input came from a pipe and a statement failed.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    interactive = stdin.isatty() and stdout.isatty()
    history = _History(history_path(), interactive)
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
            if statement_complete(text):
                history.replace_since(start, text.replace("\n", " "))
                buffer.clear()
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
