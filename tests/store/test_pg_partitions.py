"""PostgreSQL's spans partitioned by day: made on ingest, by several writers at once, dropped
by ``prune`` (and the same prune, runs and verdicts as on DuckDB); a 0010 store migrated.
A real server (``tests/postgres_server.py``); the commands under test (prune, and show and eval
after it) in their own processes, the ingests and promotions that make a history in this one
(``tracereplay_here``: no interpreter to start for each)."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import synth
from postgres_server import pg_server, pg_url  # noqa: F401
from sql_pipeline import tracereplay_here

from tracereplay.store import Store, schema
from tracereplay.store.engines.pg_partitions import DAY_NS, partition_name
from tracereplay.store.paths import StoreUrl


def _ns(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()) * 10**9


def _cli(store: str, *args: str) -> subprocess.CompletedProcess[str]:
    flag = "--db" if "://" not in store else "--store"
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", flag, store, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _here(store: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``tracereplay`` in this process, on a DuckDB file or a PostgreSQL URL."""
    return tracereplay_here(store, *args, check=False)


def _ingest(store: str, tmp: Path, seed: int, count: int, iso: str) -> None:
    (request,) = synth.requests(count, count, seed=seed, t0=_ns(iso))
    path = tmp / f"{seed}-{iso[:10]}.pb"
    path.write_bytes(request.SerializeToString())
    done = _here(store, "ingest", str(path))
    assert done.returncode == 0, done.stderr


def _partitions(url: str) -> list[str]:
    with psycopg.connect(url) as con:
        rows = con.execute(
            "SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'spans'::regclass ORDER BY 1"
        ).fetchall()
    return [r[0] for r in rows]


def _misplaced(url: str) -> int:
    """Spans not in the partition of their own UTC day."""
    with psycopg.connect(url) as con:
        [(n,)] = con.execute(
            "SELECT count(*) FROM spans WHERE tableoid::regclass::text <> 'spans_p' ||"
            " to_char(to_timestamp(start_time_unix_nano / 1e9) AT TIME ZONE 'UTC', 'YYYYMMDD')"
        ).fetchall()
    return int(n)


def test_ingest_makes_one_partition_per_day_and_stores_each_span_once(
    pg_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    days = ["2026-03-01T23:59:00", "2026-03-02T10:00:00", "2026-03-04T00:00:00"]
    for seed, iso in enumerate(days, 1):
        _ingest(pg_url, tmp_path, seed, 20, iso)
    # the first batch's traces cross midnight (10 s apart): its spans land in two days
    assert _partitions(pg_url) == ["spans_p20260301", "spans_p20260302", "spans_p20260304"]
    assert _misplaced(pg_url) == 0
    _ingest(pg_url, tmp_path, 1, 20, days[0])  # the same traces again: nothing new
    with Store.open(pg_url) as store:
        assert store.count("spans") == 60 * synth.SPANS_PER_TRACE
        assert store.count("runs") == 60


_WRITER = """
import sys, time
sys.path.insert(0, {bench!r})
import synth
from tracereplay.otlp.model import Decoded
from tracereplay.otlp.pb_decode import traces_from_request
from tracereplay.store import Store
url, seed, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
(request,) = synth.requests(10, 10, seed=seed, t0={t0})
decoded = Decoded()
traces_from_request(request, decoded)
spans = decoded.spans
with Store.open(url) as store:
    time.sleep(max(0.0, start - time.time()))
    with store.transaction():
        print(store.insert_spans(spans))
        time.sleep(0.5)  # the partition's creator holds its transaction open: the others wait
"""


def test_writers_creating_the_same_days_partition_at_once_make_it_once(
    pg_url: str,  # noqa: F811
) -> None:
    with Store.open(pg_url):
        pass  # migrated before the race
    bench = str(Path(synth.__file__).parent)
    script = _WRITER.format(bench=bench, t0=_ns("2026-05-05T12:00:00"))
    start = time.time() + 3
    seeds = [1, 2, 3, 1]  # the last writes the first one's spans again
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, pg_url, str(s), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in seeds
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    inserted = sorted(int(out) for out, _ in outs)
    assert inserted == [0, 100, 100, 100]  # one of the two same-seed writers found them stored
    assert _partitions(pg_url) == ["spans_p20260505"]
    with Store.open(pg_url) as store:
        assert store.count("spans") == 300


def _history(store: str, tmp: Path) -> str:
    """Five batches of 30 traces on four days; the oldest run promoted into a suite and
    evaluated. Returns that run's id."""
    for seed, iso in enumerate(
        [
            "2026-03-01T00:00:00",  # the promoted run's day: kept, its other traces deleted
            "2026-03-05T00:00:00",  # wholly old: dropped
            "2026-03-10T02:00:00",  # the boundary day (cutoff 12:00): these go ...
            "2026-03-10T20:00:00",  # ... and these stay
            "2026-06-01T00:00:00",
        ],
        1,
    ):
        _ingest(store, tmp, seed, 30, iso)
    with Store.open(store) as s:
        [[run_id]] = s.con.execute("SELECT run_id FROM runs ORDER BY started_at LIMIT 1").fetchall()
    assert _here(store, "promote", run_id, "--suite", "kept").returncode == 0
    assert _here(store, "eval", "kept").returncode in (0, 1)
    return run_id


def _state(store: str) -> tuple[set[str], list[tuple]]:
    with Store.open(store) as s:
        runs = {r[0] for r in s.con.execute("SELECT run_id FROM runs").fetchall()}
        verdicts = s.con.execute(
            "SELECT source_run_id, status, score FROM case_results ORDER BY started_at, source_run_id"
        ).fetchall()
    return runs, verdicts


def test_prune_drops_whole_old_days_and_keeps_what_suites_refer_to_as_on_duckdb(
    pg_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    duck = str(tmp_path / "h.duckdb")
    kept = {}
    for target in (duck, pg_url):
        (tmp_path / target[-6:]).mkdir()
        kept[target] = _history(target, tmp_path / target[-6:])
    assert kept[duck] == kept[pg_url]
    assert _partitions(pg_url) == [
        "spans_p20260301", "spans_p20260305", "spans_p20260310", "spans_p20260601"
    ]  # fmt: skip
    assert _state(duck) == _state(pg_url)

    outputs = {}
    for target in (duck, pg_url):
        done = _cli(target, "prune", "--older-than", "2026-03-10T12:00")
        assert done.returncode == 0, done.stderr
        outputs[target] = done.stdout.splitlines()[0]
    assert "removed 89 traces" in outputs[duck] and "kept 1 older runs" in outputs[duck]
    assert outputs[pg_url] == outputs[duck] + "; 1 whole days of spans dropped"
    assert _partitions(pg_url) == ["spans_p20260301", "spans_p20260310", "spans_p20260601"]
    assert _misplaced(pg_url) == 0

    runs, verdicts = _state(pg_url)
    assert (runs, verdicts) == _state(duck)
    assert len(runs) == 61 and kept[pg_url] in runs  # the boundary day's later half, June, kept
    with Store.open(pg_url) as store:
        assert store.count("spans") == 61 * synth.SPANS_PER_TRACE
    for target in (duck, pg_url):
        assert _cli(target, "show", kept[target]).returncode == 0
        assert _cli(target, "eval", "kept").returncode in (0, 1)
    assert _state(pg_url) == _state(duck)


def test_a_store_made_with_0010_moves_its_spans_into_day_partitions(
    pg_url: str,  # noqa: F811
) -> None:
    url = StoreUrl(pg_url)
    with Store.open(url, damaged_ok=True) as store:  # damaged_ok: no migration
        assert schema.migrate(store, target=10) == 10
        for i, iso in enumerate(["2026-01-01T08:00:00", "2026-01-03T08:00:00"]):
            start = _ns(iso)
            for j in range(3):
                store.con.execute(
                    "INSERT INTO spans (trace_id, span_id, name, start_time, start_time_unix_nano,"
                    " end_time_unix_nano) VALUES (?, ?, 'old', make_timestamptz(?), ?, ?)",
                    [f"{i:032x}", f"{j:016x}", (start + j) // 1000, start + j, start + j + 5],
                )
    with Store.open(pg_url) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION == 22
        assert store.count("spans") == 6
        assert [s.end_ns for s in store.load_spans([f"{1:032x}"])] == [
            _ns("2026-01-03T08:00:00") + j + 5 for j in range(3)
        ]
    assert _partitions(pg_url) == [
        partition_name(_ns(d) // DAY_NS) for d in ("2026-01-01", "2026-01-03")
    ]
