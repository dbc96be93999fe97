"""Recorded, replay and offline (``--llm recorded``) evals on a PostgreSQL store give the same
verdicts as on DuckDB: the demo's own scripts (an SDK agent recording, promotion, recorded
eval, replay, a regression caught by ``diff``, offline replay) run against both engines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _verdicts(store: str, work: Path) -> list[str]:
    """What the demo's scripts conclude on ``store``: every eval's verdict line, every diff line."""
    shutil.copytree(ROOT / "examples", work / "examples")
    env = {**os.environ, "BIN": str(BIN)}
    env.pop("TRACEREPLAY_DB", None)
    out = []
    for cmd in (  # demo_eval.sh records the demo agent's runs first (the store is new)
        ["sh", "examples/demo_eval.sh", store],
        ["sh", "examples/demo_offline.sh", store],
    ):
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, f"{cmd}: {done.stderr[-2000:]}"
        out += done.stdout.splitlines()
    lines = [re.sub(r"\s+[\d.]+s$", "", line) for line in out if line.startswith("pass rate")]
    diffs = [line.strip() for line in out if line.strip().startswith(("Regressed", "Fixed"))]
    return [re.sub(r"\b[0-9a-f]{8}\b", "<id>", line) for line in lines + diffs]  # ids per store


@pytest.mark.slow
def test_replay_and_offline_verdicts_match_on_both_engines(pg_url: str, tmp_path: Path) -> None:
    # the two engines' runs are independent processes: side by side, the test takes half as long
    with ThreadPoolExecutor(2) as pool:
        duck = pool.submit(_verdicts, str(tmp_path / "duck" / "t.duckdb"), tmp_path / "duck")
        on_postgres = _verdicts(pg_url, tmp_path / "pg")
        on_duckdb = duck.result()
    assert len(on_duckdb) >= 5 and any("failed" in v for v in on_duckdb)
    assert on_postgres == on_duckdb
