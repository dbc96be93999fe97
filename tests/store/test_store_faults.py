"""A bad day for the store file: a damaged DuckDB file, a write the file system refuses, a spool
append cut by a full disk. One line and exit 2, the data kept."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import synth  # noqa: E402

from tracereplay.store import SpoolWriter, Store, spool_dir
from tracereplay.store.spool import KIND_TRACES_PB, list_segments, read_records

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parents[1] / "fixtures" / "otlp"


def _cli(db: Path, *args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # the file system refuses writes past this size, as a full disk does
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=limit if limit_bytes else None,
    )


def _big_file(tmp_path: Path) -> Path:
    path = tmp_path / "big.pb"
    (request,) = synth.requests(1500, 1500, seed=5)
    path.write_bytes(request.SerializeToString())
    return path


def test_a_refused_write_is_one_line_and_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "full.duckdb"
    small = FIXTURES / "generated-openinference__agent_tool_calls.json"
    assert _cli(db, "ingest", str(small)).returncode == 0
    size = db.stat().st_size
    result = _cli(db, "ingest", str(_big_file(tmp_path)), limit_bytes=size + 256 * 1024)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: the disk holding {db} is full")
    assert "internal error" not in line
    with Store.open(db) as store:  # as it was
        assert store.count("spans") == 5


def test_a_damaged_store_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "cut.duckdb"
    assert _cli(db, "ingest", str(_big_file(tmp_path))).returncode == 0
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    scan = "SELECT count(*), max(length(attributes)), max(length(resource)) FROM spans"
    for args in (
        ("sql", scan),
        ("ingest", str(FIXTURES / "generated-openinference__agent_tool_calls.json")),
    ):
        result = _cli(db, *args)
        assert result.returncode == 2, result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith(f"error: {db} is damaged") and "internal error" not in line


def test_a_spool_append_cut_short_leaves_no_half_record(tmp_path: Path) -> None:
    directory = spool_dir(tmp_path / "s.duckdb")
    writer = SpoolWriter(directory)
    writer.append(KIND_TRACES_PB, b"first")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child with a file size limit just past the first record: the next is cut
        os.close(read)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        (segment,) = list_segments(directory)
        limit = segment.path.stat().st_size + 10
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        writer._pid = os.getpid()  # keep writing the parent's segment (as one process would)
        try:
            writer.append(KIND_TRACES_PB, b"x" * 100)
            outcome = b"written"
        except OSError:
            outcome = b"refused"
        os.write(write, outcome)
        os._exit(0)
    os.close(write)
    assert os.read(read, 10) == b"refused"
    os.waitpid(pid, 0)
    writer.append(KIND_TRACES_PB, b"after")  # room again: read back whole, no damage
    (segment,) = list_segments(directory)
    result = read_records(segment, 0)
    assert [p for _, p in result.records] == [b"first", b"after"]
    assert result.corrupt is None
