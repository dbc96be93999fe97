"""Recorded, replay and offline (``--llm recorded``) evals on a PostgreSQL store give the same
verdicts as on DuckDB: the demo's own scripts (an SDK agent recording, promotion, recorded
eval, replay, a regression caught by ``diff``, offline replay) run against both engines. On
DuckDB the first script's run is the session's demo store (``demo_store``: the same script on
a new store, run once for every test that reads that store)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from demo_store import demo_copy, demo_output

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _verdicts(store: str, work: Path, evaluated: str | None = None) -> list[str]:
    """What the demo's scripts conclude on ``store``: every eval's verdict line, every diff line.
    ``evaluated``: what demo_eval.sh printed when it made ``store`` (else it runs here)."""
    shutil.copytree(ROOT / "examples", work / "examples")
    env = {**os.environ, "BIN": str(BIN)}
    env.pop("TRACEREPLAY_DB", None)
    out = [] if evaluated is None else evaluated.splitlines()
    scripts = ["demo_offline.sh"] if evaluated is not None else ["demo_eval.sh", "demo_offline.sh"]
    for script in scripts:  # demo_eval.sh records the demo agent's runs first (a new store)
        cmd = ["sh", f"examples/{script}", store]
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, f"{cmd}: {done.stderr[-2000:]}"
        out += done.stdout.splitlines()
    lines = [re.sub(r"\s+[\d.]+s$", "", line) for line in out if line.startswith("pass rate")]
    diffs = [line.strip() for line in out if line.strip().startswith(("Regressed", "Fixed"))]
    return [re.sub(r"\b[0-9a-f]{8}\b", "<id>", line) for line in lines + diffs]  # ids per store


def _on_duckdb(tmp_path_factory: pytest.TempPathFactory, work: Path) -> list[str]:
    db = demo_copy(tmp_path_factory)
    return _verdicts(str(db), work, evaluated=demo_output(tmp_path_factory))


@pytest.mark.slow
def test_replay_and_offline_verdicts_match_on_both_engines(
    pg_url: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # the two engines' runs are independent processes: side by side, the test takes half as long
    with ThreadPoolExecutor(2) as pool:
        duck = pool.submit(_on_duckdb, tmp_path_factory, tmp_path / "duck")
        on_postgres = _verdicts(pg_url, tmp_path / "pg")
        on_duckdb = duck.result()
    assert len(on_duckdb) >= 5 and any("failed" in v for v in on_duckdb)
    assert on_postgres == on_duckdb
