"""`tracereplay sql` without a query: the prompt, fed through a pipe and through a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sql_pipeline import tracereplay

from tracereplay.query.sqltext import statement_complete, strip_terminator
from tracereplay.store import Store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prompt") / "p.duckdb"
    with Store.open(path):  # an empty store (reading commands refuse a missing one)
        pass
    return path


def test_piped_statements_run_in_order_across_lines(db: Path) -> None:
    script = (
        "SELECT 40\n"
        "  + 2 AS answer;\n"
        "\n"
        ".format csv\n"
        "SELECT 'a;b' AS text; -- a comment after the statement\n"
        "SELECT 1 AS x; SELECT 2 AS y;\n"
        "SELECT 'no semicolon at the end' AS last\n"
    )
    proc = tracereplay(db, "sql", input=script)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "answer" in out and "42" in out  # table format first
    assert "format: csv\ntext\na;b\ny\n2\n" in out  # then csv; a line's last statement prints
    assert out.endswith("last\nno semicolon at the end\n")
    assert proc.stderr == ""


def test_errors_are_reported_and_the_session_goes_on(db: Path) -> None:
    proc = tracereplay(
        db,
        "sql",
        input="SELECT nope;\nDELETE FROM runs;\n.bogus\nSELECT 7 AS seven;\n",
        check=False,
    )
    assert proc.returncode == 2  # piped input with a failed statement
    errors = proc.stderr.splitlines()
    assert errors[0].startswith('error: Binder Error: Referenced column "nope"')
    assert errors[1].startswith("error: refused: DELETE is not a read-only statement")
    assert errors[2] == "error: unknown command .bogus (try .help)"
    assert "seven" in proc.stdout and "7" in proc.stdout


def test_dot_commands(db: Path) -> None:
    proc = tracereplay(db, "sql", input=".help\n.tables\n.quit\nSELECT 'never run';\n")
    assert proc.returncode == 0
    assert ".tables" in proc.stdout and "suite_trend" in proc.stdout and "view" in proc.stdout
    assert "never run" not in proc.stdout


def test_write_applies_to_the_session(db: Path, tmp_path: Path) -> None:
    store = tmp_path / "w.duckdb"
    with Store.open(store):
        pass
    proc = tracereplay(store, "sql", "--write", input="CREATE TABLE notes (t VARCHAR);\n"
                       "INSERT INTO notes VALUES ('hello');\n")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "hello" in tracereplay(store, "sql", "SELECT t FROM notes").stdout


def _read_until(
    fd: int, needle: bytes, seen: bytearray, times: int = 1, timeout: float = 30.0
) -> None:
    """Read the terminal until ``needle`` has appeared ``times`` times."""
    deadline = time.monotonic() + timeout
    while seen.count(needle) < times:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"waited for {needle!r}, got {bytes(seen)[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, f"the prompt ended before {needle!r}: {bytes(seen)[-400:]!r}"
            seen.extend(chunk)


def _drain(fd: int, seen: bytearray, timeout: float = 30.0) -> None:
    """Read the terminal until the other side closes it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the process exited and closed the terminal
                return
            if not chunk:
                return
            seen.extend(chunk)


def test_terminal_session_keeps_multi_line_statements_in_the_history(
    db: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    history.write_text("SELECT 'from an earlier session' AS old;\n")
    parent, child = pty.openpty()
    env = {**os.environ, "TRACEREPLAY_HISTORY": str(history), "COLUMNS": "100", "TERM": "dumb"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "sql"],
        stdin=child, stdout=child, stderr=child, env=env, close_fds=True,
    )  # fmt: skip
    os.close(child)
    seen = bytearray()
    try:
        _read_until(parent, b"tracereplay> ", seen)
        os.write(parent, b"SELECT 20\r")
        _read_until(parent, b"...> ", seen)
        os.write(parent, b"+ 22 AS answer;\r")
        _read_until(parent, b"1 row", seen)
        _read_until(parent, b"tracereplay> ", seen, times=2)  # typed before it, ^D may be lost
        os.write(parent, b"\x04")  # Ctrl-D leaves
        _drain(parent, seen)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(parent)
    assert b"42" in seen
    lines = history.read_text().splitlines()
    assert lines[0] == "SELECT 'from an earlier session' AS old;"
    assert lines[-1] == "SELECT 20 + 22 AS answer;"


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT ';'", False),
        ("SELECT 'it''s';", True),
        ('SELECT 1 AS ";"', False),
        ("SELECT 1; -- done", True),
        ("SELECT 1 -- not yet;", False),
        ("SELECT 1 /* ; */", False),
        ("SELECT 1; /* open comment", False),
        ("SELECT 'open string;", False),
        ("", False),
    ],
)
def test_statement_complete(text: str, complete: bool) -> None:
    assert statement_complete(text) is complete


_plain = st.text(
    alphabet=st.characters(blacklist_characters="'\";-/*", blacklist_categories=("Cs",)),
    min_size=1,
).filter(lambda s: s.strip())


@given(_plain, st.sampled_from(["", ";", ";;", "; -- note", " ;\n/* x */ "]))
def test_strip_terminator_leaves_the_statement(body: str, tail: str) -> None:
    assert strip_terminator(body + tail) == body.rstrip()
    assert statement_complete(body + tail) is (";" in tail)
