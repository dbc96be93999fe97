"""docs/any-language.md runs as written: its shell blocks, line by line, in a fresh store.

The page's example is the repository's Vercel AI SDK agent: the lines run in the order the page
gives them, from the directory its ``cd`` names (``npm ci`` as ``make frameworks`` runs it,
once), with ``tracereplay`` this checkout's CLI and ``$TRACEREPLAY_DB`` a store of the test's.
The replay passes, its output says what the page shows, and the changed prompt's replay exits
1 with every case an ERROR. Skipped only where node or npm is missing.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from doc_blocks import code_blocks
from evaluate.framework_replay import FRAMEWORKS, node_modules

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "any-language.md"
VERCEL = FRAMEWORKS / "vercel_ai"


def _lines() -> list[str]:
    return [
        line.strip()
        for block in code_blocks(PAGE)
        if block.lang == "sh"
        for line in block.body.splitlines()
        if line.strip()
    ]


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    lines = _lines()
    assert lines[0] == "cd tests/fixtures/frameworks/vercel_ai"
    assert ROOT / lines[0].split()[1] == VERCEL
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    env.update(
        TRACEREPLAY_DB=str(tmp_path / "store.duckdb"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        WEATHER_TOOL_MARKS=str(tmp_path / "marks.txt"),
    )
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    for line in lines[1:]:
        if line == "npm ci":
            node_modules(VERCEL)  # as make frameworks runs it, once
            continue
        words = shlex.split(line)
        assert words[0] == "tracereplay" or "=" in words[0], line
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=VERCEL,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "Traceback" not in done.stderr, (line, done.stderr)
        outputs.append((line, done))
    ingest, promote, replay, changed = outputs
    for line, done in (ingest, promote, replay):
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    assert "pass rate 100.0%: 3 of 3 cases passed" in replay[1].stdout
    assert "2 tool call(s) ran for real: 2 result(s) as recorded, 0 differ" in replay[1].stdout
    line, done = changed
    assert done.returncode == 1, (line, done.stdout, done.stderr)
    assert "0 of 3 cases passed, 0 failed, 3 errored" in done.stdout
