"""A damaged store file (cut to half, random bytes over its middle): every command says so in
one line with exit 2 and writes nothing more into it; ``tracereplay check`` finds the damage a
command's reads would miss; the spool waits for a new store. Real files, real processes."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
import synth

from tracereplay.store import SpoolWriter, Store, spool_dir
from tracereplay.store.paths import damage_path
from tracereplay.store.spool import KIND_TRACES_PB, list_segments

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parents[1] / "fixtures" / "otlp"
SMALL = FIXTURES / "generated-openinference__agent_tool_calls.json"


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 1,500 agent runs (15,000 spans), made once."""
    folder = tmp_path_factory.mktemp("whole")
    source = folder / "big.pb"
    (request,) = synth.requests(1500, 1500, seed=5)
    source.write_bytes(request.SerializeToString())
    db = folder / "whole.duckdb"
    assert _cli(db, "ingest", str(source)).returncode == 0
    return db


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _overwritten(data: bytes) -> bytes:
    middle = len(data) // 2
    noise = random.Random(1).randbytes(600 * 1024)  # over two whole 256 KiB blocks
    return data[:middle] + noise + data[middle + len(noise) :]


def _one_damaged_line(result: subprocess.CompletedProcess[str], db: Path) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {db} is damaged: "), line
    assert "restore it from a copy" in line and "internal error" not in line


@pytest.mark.parametrize("damage", [_cut, _overwritten], ids=["cut-to-half", "random-bytes"])
def test_every_command_says_damaged_and_writes_nothing(
    whole: Path, tmp_path: Path, damage: object
) -> None:
    db = tmp_path / "store.duckdb"
    db.write_bytes(damage(whole.read_bytes()))  # type: ignore[operator]
    # check reads every block: it finds the damage wherever it is
    result = _cli(db, "check")
    _one_damaged_line(result, db)
    assert "DAMAGED" in result.stdout
    before = db.read_bytes()
    # an agent keeps recording: its spool waits, undrained
    writer = SpoolWriter(spool_dir(db))
    writer.append(KIND_TRACES_PB, b"not drained into a damaged file")
    writer.close()
    for args in (
        ("runs",),
        ("runs", "--status", "failed", "--since", "1d"),
        ("sql", "SELECT count(*) FROM runs"),
        ("ingest", str(SMALL)),
        ("export", "-o", str(tmp_path / "out")),
    ):
        _one_damaged_line(_cli(db, *args), db)
    assert db.read_bytes() == before  # nothing more written into it
    assert len(list_segments(spool_dir(db))) == 1
    # recovery: moved aside, a new store takes the path (and the spool)
    db.rename(tmp_path / "damaged.duckdb")
    assert _cli(db, "ingest", str(SMALL)).returncode == 0
    assert not damage_path(db).exists()
    assert list_segments(spool_dir(db)) == []  # drained (the record itself is rejected)
    assert _cli(db, "check").returncode == 0


def test_a_command_that_meets_damage_leaves_the_note_for_the_next(
    whole: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.duckdb"
    db.write_bytes(_overwritten(whole.read_bytes()))
    scan = "SELECT count(*), max(length(attributes)), max(length(input_messages)) FROM llm_calls"
    first = _cli(db, "sql", "SELECT * FROM spans, runs, tool_calls, llm_calls LIMIT 0")
    assert first.returncode == 0  # reads no block: the damage is not met, the answer right
    results = [_cli(db, "check"), _cli(db, "sql", scan), _cli(db, "runs")]
    for result in results:
        _one_damaged_line(result, db)


def test_check_finds_a_whole_store_whole_and_a_restored_copy_clears_the_note(
    whole: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.duckdb"
    db.write_bytes(_cut(whole.read_bytes()))
    _one_damaged_line(_cli(db, "runs"), db)  # cut short: found at open, whatever is read
    db.write_bytes(whole.read_bytes())  # a copy restored in place (same file)
    _one_damaged_line(_cli(db, "runs"), db)  # still refused: the note names this file
    result = _cli(db, "check")
    assert result.returncode == 0, result.stderr
    assert "no damage found" in result.stdout and "15000 rows read" in result.stdout
    assert _cli(db, "runs").returncode == 0


def test_check_finds_a_damaged_spool_record(whole: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    db.write_bytes(whole.read_bytes())
    writer = SpoolWriter(spool_dir(db))
    writer.append(KIND_TRACES_PB, b"x" * 1000)
    writer.close()
    [segment] = list_segments(spool_dir(db))
    data = bytearray(segment.path.read_bytes())
    data[500] ^= 0xFF
    segment.path.write_bytes(bytes(data))
    result = _cli(db, "check")
    _one_damaged_line(result, spool_dir(db))
    assert "bad checksum" in result.stderr
    # the file is whole: commands work, and the drain sets the damaged segment aside
    assert _cli(db, "runs").returncode == 0
    assert list_segments(spool_dir(db)) == []
    with Store.open(db) as store:
        assert store.count("spans") == 15000
