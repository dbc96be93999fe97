"""Shared set-up for the runner / replay / diff / eval CLI tests: a store with recorded runs of
the test agents (``agents/replay_agents.py``) promoted into a suite, and CLI helpers."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import tracereplay
from tracereplay.cli.app import app
from tracereplay.store.open import open_store

AGENTS = Path(__file__).parent / "agents"

import replay_agents  # noqa: E402

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo", "Quito", "Dakar", "Hanoi", "Perth", "Sofia"]
runner = CliRunner()


def query(city: str) -> str:
    return f"What is the weather in {city}?"


def cli(db: Path, *args: str) -> Any:
    """Run ``tracereplay --db db ARGS`` in-process; the result has exit_code, stdout, stderr."""
    return runner.invoke(app, ["--db", str(db), *args])


def eval_process(db: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``tracereplay --db DB eval weather ARGS`` as a user runs it, in a process of its own
    started in ``agents/`` (``kwargs``: ``env``, ``preexec_fn``); its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather", *args],
        cwd=AGENTS, capture_output=True, text=True, timeout=120, **kwargs,
    )  # fmt: skip


#: the stores ``make_suite`` made in this process, by (cities, suite, agent): copied, not made again
_MADE: dict[tuple[tuple[str, ...], str, str], Path] = {}
_MADE_DIR: list[Path] = []


def make_suite(
    db: Path, cities: list[str] | None = None, suite: str = "weather", agent: str = "weather"
) -> None:
    """Record the reference agent live for each city, then promote every run into ``suite``.

    The first call for these cities, suite and agent in this process records and promotes; the
    later ones copy that store to ``db`` (a test file asks for the same store in each test: 0.3 s
    of recording and promotion each) and point the SDK at ``db`` as recording does."""
    chosen = cities if cities is not None else CITIES[:3]
    key = (tuple(chosen), suite, agent)
    made = _MADE.get(key)
    if made is not None:
        _copy_store(made, db)
        tracereplay.configure(service_name="replay-tests", db=str(db))
        return
    _record_suite(db, chosen, suite, agent)
    if not _MADE_DIR:
        _MADE_DIR.append(Path(tempfile.mkdtemp(prefix="replay-suites-")))
        atexit.register(shutil.rmtree, _MADE_DIR[0], True)
    made = _MADE_DIR[0] / f"{len(_MADE)}.duckdb"
    _copy_store(db, made)
    _MADE[key] = made


def _copy_store(source: Path, target: Path) -> None:
    """The store file (and its WAL, if any) at ``target``."""
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))


def _record_suite(db: Path, chosen: list[str], suite: str, agent: str) -> None:
    if agent == "weather_async":
        replay_agents.record_async(str(db), [query(c) for c in chosen])
    else:
        replay_agents.record(str(db), [query(c) for c in chosen])
    result = cli(db, "promote", "--where", "kind = 'live'", "--suite", suite)
    assert result.exit_code == 0, result.output


def eval_json(db: Path, tmp_path: Path, *args: str, exit_code: int | None = None) -> dict:
    """Run ``eval ARGS --json FILE`` and return the JSON document."""
    out = tmp_path / f"eval-{len(list(tmp_path.glob('eval-*.json')))}.json"
    result = cli(db, "eval", *args, "--json", str(out))
    if exit_code is not None:
        assert result.exit_code == exit_code, result.output
    assert out.exists(), result.output
    return json.loads(out.read_text())


def rows(db: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Query the store as every tracereplay command does (the spool drained first)."""
    with open_store(db) as store:
        return store.query_dicts(sql, params or [])
