"""The demo's store, as ``make demo`` makes it (``examples/demo_eval.sh`` on a new store: the
weather agent's five live runs, suite ``weather-regressions``, eval runs labelled recorded, v1,
v2 and v2-fifo, the v2 regression), made once per test session (``made_once``) and copied for
each module that reads it: the docs examples, the first-hour CLI, the demo script's own test
and the DuckDB side of the two-engine eval ran the script each, ~7 s of CPU apiece.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from made_once import copy_made_once, made_once
from typer.testing import CliRunner

from tracereplay.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _make(folder: Path) -> None:
    """``examples/demo_eval.sh folder/work/tracereplay.duckdb``; what it printed beside."""
    work = folder / "work"
    env = {**os.environ, "BIN": str(BIN)}
    env.pop("TRACEREPLAY_DB", None)
    done = subprocess.run(
        ["sh", "examples/demo_eval.sh", str(work / "tracereplay.duckdb")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # a reading command drains what the agent's SDK left in the spool into the file
    listed = CliRunner().invoke(app, ["--db", str(work / "tracereplay.duckdb"), "runs"])
    assert listed.exit_code == 0, listed.output
    (folder / "demo_eval.stdout").write_text(done.stdout)


def demo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the folder the script wrote (the store and its ``eval-v1.json``,
    ``eval-v2.json``, ``eval-v2.junit.xml``) of the caller's own; returns its store's path."""
    return copy_made_once(tmp_path_factory, "demo", _make) / "work" / "tracereplay.duckdb"


def demo_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What ``examples/demo_eval.sh`` printed when it made the store."""
    return (made_once(tmp_path_factory, "demo", _make) / "demo_eval.stdout").read_text()
