"""The demo's store, as ``make demo`` makes it (``examples/demo_eval.sh`` on a new store: the
weather agent's five live runs, suite ``weather-regressions``, eval runs labelled recorded, v1,
v2 and v2-fifo, the v2 regression), made once per test session and copied for each module.

The tests that read it (the docs examples, the first-hour CLI, the demo script's own test) ran
the script each, ~7 s of CPU apiece for the same store. The first to ask runs it, under a file
lock in the folder the xdist workers share; every other gets a copy of the folder the script
wrote (the store and its ``eval-v1.json``, ``eval-v2.json``, ``eval-v2.junit.xml``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock
from typer.testing import CliRunner

from tracereplay.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's demo folder (built on first use): ``work/`` and the script's output."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "demo-store"
    root.mkdir(exist_ok=True)
    with FileLock(str(root / "build.lock")):
        if not (root / "built").exists():
            _build(root)
    return root


def _build(root: Path) -> None:
    work = root / "work"
    shutil.rmtree(work, ignore_errors=True)
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
    (root / "demo_eval.stdout").write_text(done.stdout)
    (root / "built").touch()


def demo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's folder of this module's own; returns its store's path."""
    target = tmp_path_factory.mktemp("demo")
    shutil.copytree(_shared(tmp_path_factory) / "work", target, dirs_exist_ok=True)
    return target / "tracereplay.duckdb"


def demo_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What ``examples/demo_eval.sh`` printed when it made the store."""
    return (_shared(tmp_path_factory) / "demo_eval.stdout").read_text()
