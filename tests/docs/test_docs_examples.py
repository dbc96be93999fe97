"""Every example in the docs runs against a store made by the demo (`make demo`'s steps), so
the docs cannot drift from the CLI and the schema:

- every ```sql block runs as written (read-only) and every ``tracereplay ...`` command line of a
  shell block (README and docs/) parses and runs: no usage error (an option or command that no
  longer exists, a bad value), no internal error. A placeholder the reader replaces (``3f2a``,
  ``<previous-eval-run>``, a file of their own) may give a one-line "not found" error; commands
  that need what the demo does not have (a server, the reader's agent) are only parsed.

The command lines run in this process (typer's CliRunner, as a test of the CLI does): what
they check is the command's parsing and behaviour, not the process; the demo's own steps run as
``make demo`` runs them.
"""

from __future__ import annotations

import re
import shlex
import traceback
from pathlib import Path

import duckdb
import pytest
from demo_store import demo_copy
from doc_blocks import code_blocks
from typer.testing import CliRunner, Result

from tracereplay.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: commands that would wait or need the reader's own agent or files: their options are checked
#: with --help instead of running them
ONLY_PARSED = (
    "serve", "ui", "ingest", "eval", "replay", "sql", "export", "report", "store", "llm-server",
)  # fmt: skip


def _blocks(lang: str) -> list[tuple[str, int, str]]:
    out = []
    for path in DOC_FILES:
        for block in code_blocks(path):
            if block.lang == lang or (lang == "sh" and block.lang in ("", "sh", "bash", "console")):
                out.append((path.name, block.line, block.body))
    return out


def _command_lines() -> list[tuple[str, str]]:
    found = []
    for name, line, body in _blocks("sh"):
        joined = re.sub(r"\\\n\s*", " ", body)
        for i, raw in enumerate(joined.splitlines()):
            text = raw.strip().removeprefix("$ ").strip()
            if (
                text.startswith("tracereplay ")
                and not text.startswith("tracereplay.")
                and "=" not in text.split()[1]
            ):
                text = re.sub(r"\s+#.*$", "", text)  # a trailing comment
                found.append((f"{name}:{line + i + 1}", text))
    return found


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's store (``make demo``'s steps, run once per session)."""
    return demo_copy(tmp_path_factory)


def _tracereplay(db: Path, *args: str) -> Result:
    """``tracereplay --db DB ARGS`` in this process, 80 columns wide, no $TRACEREPLAY_DB."""
    return CliRunner().invoke(
        app, ["--db", str(db), *args], env={"COLUMNS": "80", "TRACEREPLAY_DB": None}
    )


@pytest.mark.parametrize("where,sql", [(f"{n}:{line}", body) for n, line, body in _blocks("sql")])
def test_every_sql_example_runs(demo_db: Path, where: str, sql: str, tmp_path: Path) -> None:
    if "DIR/" in sql:  # the directory `tracereplay export -o DIR` wrote
        out = tmp_path / "export"
        exported = _tracereplay(demo_db, "export", "-o", str(out))
        assert exported.exit_code == 0, exported.output
        sql = sql.replace("DIR/", f"{out}/")
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        for statement in [s for s in sql.split(";") if s.strip() and not _only_comments(s)]:
            con.execute(statement).fetchall()
    except duckdb.Error as exc:
        pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
    finally:
        con.close()


def _only_comments(sql: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in sql.splitlines())


def _fill(text: str, db: Path) -> str:
    """The placeholders a reader replaces, replaced with things the demo store has."""
    con = duckdb.connect(str(db), read_only=True)
    run = con.execute("SELECT run_id FROM runs WHERE kind = 'live' LIMIT 1").fetchall()[0][0]
    con.close()
    for placeholder in ("<run id>", "<run-id>", "RUN_ID", "3f2a9c1e", "3f2a"):
        text = text.replace(placeholder, run[:8])
    for placeholder in ("<previous-eval-run>", "<this-eval-run>"):
        text = text.replace(placeholder, "weather-regressions@-1")
    return text


@pytest.mark.parametrize("where,command", _command_lines())
def test_every_command_example_runs(
    demo_db: Path, where: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        argv = shlex.split(_fill(command, demo_db))
    except ValueError:
        pytest.skip("not a complete command line")
    if argv[1].endswith(":"):
        pytest.skip("what a command printed, not a command")
    if "|" in argv or any(a.startswith(("<", "[")) or a.endswith("...") for a in argv):
        pytest.skip("a synopsis, not an example")
    argv = argv[1:]
    if argv[:1] == ["--db"]:
        argv = argv[2:]
    names = [a for a in argv if not a.startswith("-")][:1]
    if names and names[0] in ONLY_PARSED:
        argv = [*argv, "--help"]  # parsed (every option must exist), not run
    monkeypatch.chdir(tmp_path)  # the files a command writes (report -o report.html ...)
    done = _tracereplay(demo_db, *argv)
    err = done.stderr
    # a bug: an exception out of the command (the console script would say "internal error")
    crashed = done.exception is not None and not isinstance(done.exception, SystemExit)
    assert not crashed, f"{where}: {command}\n{''.join(_traceback(done))}"
    assert "Traceback" not in err and "internal error" not in err, f"{where}: {command}\n{err}"
    assert "(see `tracereplay" not in err, f"{where}: {command}: usage error: {err}"
    if done.exit_code == 2:
        assert re.search(
            r"error: (no |.*not found|.*does not exist|.*matches nothing|no such)", err
        ), f"{where}: {command}\n{err}"


def _traceback(done: Result) -> list[str]:
    assert done.exc_info is not None
    return traceback.format_exception(*done.exc_info)
