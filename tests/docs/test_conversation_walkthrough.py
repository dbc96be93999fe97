"""docs/evaluating.md's worked example of a multi-turn case (issue 54), run as written in a
fresh directory: the page's Python files are written out (each block's first line names its
file), its commands run in order as a user types them (``# exit N`` is the exit code a command
must give, 0 otherwise), and its SQL shows each turn's verdict as the page says."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import code_blocks

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "evaluating.md"
HEADING = "### Multi-turn cases"


def _section_blocks() -> list:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.index("\n### ", start + len(HEADING))
    first, last = text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1
    return [b for b in code_blocks(PAGE) if first < b.line < last]


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    assert words[0] == "tracereplay", command
    return [sys.executable, "-m", "tracereplay", *words[1:]]


def test_the_worked_example_runs_as_written(tmp_path: Path) -> None:
    blocks = _section_blocks()
    files = [b for b in blocks if b.lang == "python"]
    assert [b.body.splitlines()[0] for b in files] == ["# chat.py", "# chat_v2.py"]
    for block in files:
        (tmp_path / block.body.splitlines()[0][2:]).write_text(block.body)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    env.update(TRACEREPLAY_DB=str(tmp_path / "tracereplay.duckdb"), PYTHONPATH=str(tmp_path))
    env["COLUMNS"] = "200"
    [console] = [b for b in blocks if b.lang == "console"]
    outputs = []
    for line in console.body.splitlines():
        command, _, comment = line.removeprefix("$ ").partition("  # ")
        code = re.fullmatch(r"exit (\d+)", comment.strip())
        done = subprocess.run(
            _argv(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
        )
        said = done.stdout + done.stderr
        assert done.returncode == (int(code.group(1)) if code else 0), f"{command}\n{said}"
        assert "Traceback" not in said
        outputs.append(" ".join(said.split()))
    assert "2 turns" in outputs[2]  # promote --session
    assert "1 of 1 cases passed" in outputs[3]
    assert "containsExpected: turn 1:" in outputs[4] and "turn 2:" not in outputs[4]
    assert "turn 2:" in outputs[5]

    [sql] = [b for b in blocks if b.lang == "sql"]
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "sql", sql.body, "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [(r["turn"], r["status"]) for r in json.loads(done.stdout)]
    assert rows == [
        (1, "PASSED"), (2, "PASSED"),  # chat:answer
        (1, "FAILED"), (2, "PASSED"),  # chat_v2, the recorded answers: turn 2 still right
        (1, "FAILED"), (2, "FAILED"),  # chat_v2 --history replayed: turn 1 carries into 2
    ]  # fmt: skip
