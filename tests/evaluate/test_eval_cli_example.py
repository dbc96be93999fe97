"""The evaluation demo (``examples/demo_eval.sh``, the end of ``make demo``) runs as documented:
it fails itself unless replaying the changed agent regresses exactly the forecast case."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
@pytest.mark.slow
def test_demo_eval_script_shows_the_regression(tmp_path: Path) -> None:
    db = tmp_path / "demo" / "tracereplay.duckdb"
    env = {**os.environ, "BIN": str(Path(sys.executable).parent)}
    env.pop("TRACEREPLAY_DB", None)
    done = subprocess.run(
        ["sh", str(ROOT / "examples" / "demo_eval.sh"), str(db)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Regressed 1" in done.stdout and "Unchanged 2" in done.stdout
    v1 = json.loads((db.parent / "eval-v1.json").read_text())
    v2 = json.loads((db.parent / "eval-v2.json").read_text())
    assert [c["status"] for c in v1["cases"]] == ["PASSED"] * 3
    # the changed call has no recording: the agent did something else, so the case FAILED
    assert [c["status"] for c in v2["cases"]] == ["PASSED", "PASSED", "FAILED"]
    assert "get_forecast" in v2["cases"][2]["reason"] and '"days":5' in v2["cases"][2]["reason"]
    junit = (db.parent / "eval-v2.junit.xml").read_text()
    assert junit.count("<failure") == 1 and junit.count("<error") == 0
