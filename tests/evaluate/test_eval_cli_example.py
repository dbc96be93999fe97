"""The evaluation demo (``examples/demo_eval.sh``, the end of ``make demo``) runs as documented:
it fails itself unless replaying the changed agent regresses exactly the forecast case. The
script's run is the session's demo store (``demo_store``: run once, as ``make demo`` runs it,
for every test that reads that store)."""

from __future__ import annotations

import json
import shutil

import pytest
from demo_store import demo_copy, demo_output


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
@pytest.mark.slow
def test_demo_eval_script_shows_the_regression(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = demo_copy(tmp_path_factory)  # the script exited 0, or this fails with its output
    stdout = demo_output(tmp_path_factory)
    assert "Regressed 1" in stdout and "Unchanged 2" in stdout
    v1 = json.loads((db.parent / "eval-v1.json").read_text())
    v2 = json.loads((db.parent / "eval-v2.json").read_text())
    assert [c["status"] for c in v1["cases"]] == ["PASSED"] * 3
    # the changed call has no recording: the agent did something else, so the case FAILED
    assert [c["status"] for c in v2["cases"]] == ["PASSED", "PASSED", "FAILED"]
    assert "get_forecast" in v2["cases"][2]["reason"] and '"days":5' in v2["cases"][2]["reason"]
    junit = (db.parent / "eval-v2.junit.xml").read_text()
    assert junit.count("<failure") == 1 and junit.count("<error") == 0
