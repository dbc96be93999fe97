"""Output of `tracereplay sql`: table fitted to the terminal, csv / json / jsonl / parquet with
the same values on stdout and in a file, streamed rather than held in memory."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sql_pipeline import tracereplay as tracereplay_process
from sql_pipeline import tracereplay_here as tracereplay
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store import Store

TRICKY = (
    "SELECT 1 AS n, 'a \"quoted\", comma' AS text, 'line one\nline two' AS multi,"
    " 'naïve ☃' AS uni, NULL::VARCHAR AS missing, [1, 2] AS list,"
    " {'k': 'v', 'n': 1.5} AS struct, '{\"x\": [1, {\"y\": null}]}'::JSON AS doc,"
    " TIMESTAMPTZ '2026-11-30 08:00:00+00' AS at, 7 AS n"
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("formats") / "f.duckdb"
    with Store.open(path):  # an empty store (reading commands refuse a missing one)
        pass
    return path


def sql(db: Path, *args: str):
    result = CliRunner().invoke(app, ["--db", str(db), "sql", *args])
    assert result.exit_code == 0, result.output
    return result


def test_csv_quotes_what_needs_it_and_writes_nested_values_as_json(db: Path) -> None:
    out = sql(db, TRICKY, "--format", "csv").stdout
    [header, row] = list(csv.reader(io.StringIO(out)))
    assert header == ["n", "text", "multi", "uni", "missing", "list", "struct", "doc", "at", "n_1"]
    assert row[:4] == ["1", 'a "quoted", comma', "line one\nline two", "naïve ☃"]
    assert row[4] == ""
    assert json.loads(row[5]) == [1, 2]
    assert json.loads(row[6]) == {"k": "v", "n": 1.5}
    assert json.loads(row[7]) == {"x": [1, {"y": None}]}
    assert row[8] == "2026-11-30 08:00:00+00" and row[9] == "7"


def test_csv_quotes_only_the_values_that_need_it(db: Path) -> None:
    """Minimal quoting, as Python's csv module does it: a plain word is not quoted."""
    query = (
        "SELECT 'weather' AS suite_name, 0.5 AS pass_rate, true AS ok, 'a, b' AS comma,"
        " 'say \"hi\"' AS quote, NULL AS missing"
    )
    out = sql(db, query, "--format", "csv").stdout
    assert out == (
        'suite_name,pass_rate,ok,comma,quote,missing\nweather,0.5,true,"a, b","say ""hi""",\n'
    )


def test_json_is_one_array_with_json_columns_nested(db: Path) -> None:
    [row] = json.loads(sql(db, TRICKY, "--format", "json").stdout)
    assert row == {
        "n": 1, "text": 'a "quoted", comma', "multi": "line one\nline two", "uni": "naïve ☃",
        "missing": None, "list": [1, 2], "struct": {"k": "v", "n": 1.5},
        "doc": {"x": [1, {"y": None}]}, "at": "2026-11-30 08:00:00+00", "n_1": 7,
    }  # fmt: skip


def test_jsonl_is_one_object_per_line(db: Path) -> None:
    out = sql(db, "SELECT range AS i FROM range(3)", "--format", "jsonl").stdout
    assert out == '{"i":0}\n{"i":1}\n{"i":2}\n'


@pytest.mark.parametrize(("fmt", "expected"), [("csv", "i\n"), ("json", "[]\n"), ("jsonl", "")])
def test_empty_results(db: Path, fmt: str, expected: str) -> None:
    assert sql(db, "SELECT range AS i FROM range(0)", "--format", fmt).stdout == expected


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_a_file_holds_exactly_what_stdout_shows(db: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"out.{fmt}"
    shown = sql(db, TRICKY, "--format", fmt).stdout_bytes
    sql(db, TRICKY, "--format", fmt, "-o", str(target))
    assert target.read_bytes() == shown


def test_parquet_keeps_types(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.parquet"
    sql(db, TRICKY, "--format", "parquet", "-o", str(target))
    table = pq.read_table(target)
    assert table.column_names[-1] == "n_1"
    row = table.to_pylist()[0]
    assert row["n"] == 1 and row["list"] == [1, 2] and row["struct"] == {"k": "v", "n": 1.5}
    assert json.loads(row["doc"]) == {"x": [1, {"y": None}]}
    assert row["at"].isoformat() == "2026-11-30T08:00:00+00:00"


def test_parquet_needs_a_file(db: Path) -> None:
    proc = tracereplay(db, "sql", "SELECT 1", "--format", "parquet", check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --format parquet writes a binary file: give -o FILE"


def test_a_failing_query_leaves_no_file(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    proc = tracereplay(
        db, "sql", "SELECT CAST(i AS INTEGER) FROM (VALUES ('1'), ('x')) t(i)", "--format", "csv",
        "-o", str(target), check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Conversion Error" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_table_fits_a_narrow_terminal(db: Path) -> None:
    numbers = ", ".join(f"{i} AS column_{i}" for i in range(12))
    query = f"SELECT 'first' AS name, repeat('long text ', 20) AS description, {numbers}"
    # in a process of its own: the width is its terminal's (in this process, the CLI's console
    # is shared with every command the worker ran before)
    proc = tracereplay_process(db, "sql", query, env={"COLUMNS": "60"})
    table, note = proc.stdout.splitlines()[:-1], proc.stdout.splitlines()[-1]
    assert all(len(line) <= 60 for line in table), table
    assert "first" in table[2] and "long text" in table[2] and "…" in table[2]
    assert "column_0" in table[0]
    assert note.startswith("more columns not shown: ") is False  # the count comes first
    assert "more columns not shown: " in note and "column_11" in note and "1 row" in note


def test_table_shows_max_rows_and_counts_the_rest(db: Path) -> None:
    proc = tracereplay(db, "sql", "SELECT range AS i FROM range(50)", "--max-rows", "5")
    body = [ln.strip() for ln in proc.stdout.splitlines()]
    assert body[2:7] == ["0", "1", "2", "3", "4"]
    assert "5 of 50 rows shown" in body[-1]


def test_table_shows_null_and_flattens_newlines(db: Path) -> None:
    proc = tracereplay(db, "sql", "SELECT NULL AS x, 'a\nb' AS y")
    assert "NULL" in proc.stdout and "a b" in proc.stdout


_REPORT_PEAK = (
    "import atexit, re, sys\n"
    "def _peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    sys.stderr.write('VmHWM ' + re.search(r'VmHWM:\\s+(\\d+)', status).group(1) + '\\n')\n"
    "atexit.register(_peak)\n"
    "from tracereplay.cli.app import main\n"
    "sys.argv = ['tracereplay'] + sys.argv[1:]\n"
    "main()\n"
)


def _streamed(db: Path, out: Path, fmt: str, rows: int, width: int) -> tuple[int, int, int]:
    """Run the real CLI writing to ``out``; return (bytes, lines, the child's peak RSS in MB).

    The peak is the child's own ``VmHWM`` read at exit: ``ru_maxrss`` would also count the
    memory of the forked test process before ``exec``, which depends on what ran before."""
    query = f"SELECT range AS i, repeat('x', {width}) AS s FROM range({rows})"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _REPORT_PEAK,
            "--db",
            str(db),
            "sql",
            query,
            "--format",
            fmt,
            "-o",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    peak_kb = int(re.search(r"VmHWM (\d+)", proc.stderr).group(1))
    size = out.stat().st_size
    with open(out, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return size, lines, peak_kb // 1024


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_large_results_stream_instead_of_filling_memory(db: Path, tmp_path: Path, fmt: str) -> None:
    size, lines, peak_mb = _streamed(db, tmp_path / f"out.{fmt}", fmt, rows=1_000_000, width=250)
    assert lines == 1_000_000 + (fmt == "csv")
    assert size > 250_000_000
    # the interpreter, DuckDB and pyarrow alone take ~180 MB (a streamed run peaks at 180-220);
    # the output is ~260 MB: held in memory, whole or as its rows, it would pass 440 MB
    assert peak_mb < 350, f"peak RSS {peak_mb} MB for {size >> 20} MB of output"


def test_query_from_stdin(db: Path) -> None:
    proc = tracereplay(db, "sql", "-", "--format", "csv", input="SELECT 'from stdin' AS source;\n")
    assert proc.stdout == "source\nfrom stdin\n"


def test_a_reader_that_leaves_early_is_not_an_error(db: Path) -> None:
    query = "SELECT range AS i FROM range(5000000)"
    proc = subprocess.run(
        f'"{sys.executable}" -m tracereplay --db "{db}" sql "{query}" --format csv | head -n 2',
        shell=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.stdout == "i\n0\n"
    assert proc.stderr == ""
