"""A store filled by the real pipeline, built once per test session through the CLI:

ingest the OTLP fixtures -> promote every top-level run into suite ``weather`` -> eval it
recorded (label v1) -> recorded again, twice per case (v2) -> replay with ``sql_agents:flaky``
(v3: ``--repeat 2``, fifo tool matching; odd repetitions drift and answer with markup).

Afterwards: 6 runs, 6 cases, 3 eval runs. v1 and v2 pass all 6 cases (#1 has no expected
output: containsExpected is skipped for it); v3 passes none: #0, #1, #3, #4, #5 are flaky (one
repetition each way), #2 is an ERROR (its source run recorded no tool calls to answer from).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from made_once import copy_made_once
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store.open import open_store

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "otlp"
SUITE = "weather"

_built: dict[str, Path] = {}


def tracereplay(db: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
                input: str | None = None, cwd: Path | None = None,
                ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run the real CLI in a subprocess (``python -m tracereplay --db DB ...``)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        input=input,
        cwd=cwd,
        timeout=120,
    )
    if check and proc.returncode not in (0, 1):  # eval exits 1 when a case does not pass
        raise AssertionError(f"tracereplay {' '.join(args)} -> {proc.returncode}: {proc.stderr}")
    return proc


def tracereplay_here(db: Path | str, *args: str, env: dict[str, str | None] | None = None,
                     check: bool = True, input: str | None = None,
                     ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``tracereplay --db DB ...`` (``--store`` for a URL) in this process (typer's CliRunner),
    as ``tracereplay`` gives it, for tests of what a command does rather than of its process:
    no interpreter and imports to pay for each call. ``env`` is set (a None value unset) while
    the command runs. An exception out of the command (the console script's "internal error")
    is raised."""
    flag = "--store" if "://" in str(db) else "--db"
    result = CliRunner().invoke(
        app, [flag, str(db), *args], input=input, env={"COLUMNS": "200", **(env or {})}
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    proc = subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)
    if check and proc.returncode not in (0, 1):
        raise AssertionError(f"tracereplay {' '.join(args)} -> {proc.returncode}: {proc.stderr}")
    return proc


def build(directory: Path) -> Path:
    """Fill ``directory/pipeline.duckdb`` (see the module docstring) and return its path."""
    db = directory / "pipeline.duckdb"
    files = sorted(str(p) for p in FIXTURES.glob("generated-*"))
    # in this process, but for the replay (its agent processes start from a CLI of their own)
    tracereplay_here(db, "ingest", *files)
    tracereplay_here(db, "promote", "--where", "parent_run_id IS NULL", "--suite", SUITE)
    tracereplay_here(db, "eval", SUITE, "--label", "v1")
    tracereplay_here(db, "eval", SUITE, "--label", "v2", "--repeat", "2")
    tracereplay(
        db, "eval", SUITE, "--label", "v3", "--agent", "sql_agents:flaky",
        "--tool-match", "fifo", "--repeat", "2", "--concurrency", "1",
        env={"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])},
    )  # fmt: skip
    with open_store(db):  # drains the spool: the replay runs are in the file (UI pages never drain)
        pass
    return db


def pipeline_store(tmp_path_factory) -> Path:  # noqa: ANN001 - pytest's TempPathFactory
    """The session's pipeline store: built once for every worker (``made_once``: ~7 s of CLI
    runs), copied once per process (whose tests only read it; ``private_copy`` for a test that
    writes)."""
    if "db" not in _built:
        folder = copy_made_once(tmp_path_factory, "pipeline", build)
        _built["db"] = folder / "pipeline.duckdb"
    return _built["db"]


def private_copy(db: Path, directory: Path) -> Path:
    """A copy of the pipeline store for a test that writes."""
    target = directory / "copy.duckdb"
    shutil.copyfile(db, target)
    return target
