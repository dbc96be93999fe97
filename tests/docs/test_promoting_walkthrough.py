"""docs/promoting.md's walkthrough ("The whole path"), every command run as a user types it, in
order, in a fresh directory: the example agent records against the scripted model, the bad run
is found, labelled, promoted, replayed (failing), fixed and replayed (passing), and the pull
request's summary lists the case as fixed. ``RUN_ID`` is the run the SQL step found; ``# exit
N`` after a command is the exit code it must give (0 otherwise)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import code_blocks
from offline_store import scripted_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "promoting.md"
HEADING = "## The whole path"


def walkthrough() -> list[tuple[str, int]]:
    """The section's command lines and the exit code each must give."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.index("\n## ", start + len(HEADING))
    first, last = text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1
    out = []
    for block in code_blocks(PAGE):
        if block.lang != "console" or not first < block.line < last:
            continue
        for line in block.body.splitlines():
            if line.startswith("$ "):
                command, _, comment = line[2:].partition("  # ")
                code = re.fullmatch(r"exit (\d+)", comment.strip())
                out.append((command.strip(), int(code.group(1)) if code else 0))
    return out


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    steps = walkthrough()
    assert [c.split()[:2] for c, _ in steps][:3] == [
        ["python", "examples/weather_agent/openai_agent.py"],
        ["tracereplay", "sql"],
        ["tracereplay", "show"],
    ]
    assert len(steps) == 9
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    server, url = scripted_server().start()
    env.update(
        OPENAI_BASE_URL=url,
        OPENAI_API_KEY="demo",
        TRACEREPLAY_DB=str(tmp_path / "tracereplay.duckdb"),
        PYTHONPATH=str(ROOT / "examples" / "weather_agent"),
        COLUMNS="200",
    )
    run_id = ""
    outputs: list[str] = []
    try:
        for command, expected in steps:
            argv = shlex.split(command.replace("RUN_ID", run_id or "RUN_ID"))
            if argv[0] == "python":
                argv = [sys.executable, str(ROOT / argv[1]), *argv[2:]]
            else:
                argv = [sys.executable, "-m", "tracereplay", *argv[1:]]
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path)
            )
            said = done.stdout + done.stderr
            assert done.returncode == expected, f"{command}\n{said}"
            assert "Traceback" not in said, said
            outputs.append(said)
            if argv[3:4] == ["sql"]:
                (run_id,) = re.findall(r"[0-9a-f]{8}-[0-9a-f-]{27}", done.stdout)
    finally:
        server.shutdown()
    by_step = dict(zip([c.split()[1] if c.startswith("tracereplay") else c for c, _ in steps],
                       outputs, strict=False))  # fmt: skip
    assert "Atlantis" in outputs[2] and "weather station" in outputs[2]  # show
    assert "labelled run" in outputs[3] and run_id[:8] in outputs[4]  # label, runs --label
    assert "1 new cases in suite 'regressions'" in by_step["promote"]
    assert "FAILED" in outputs[6] and "There is no city called Atlantis" in outputs[6]
    assert "pass rate 100.0%: 1 of 1 cases passed" in outputs[7]
    summary = outputs[8]
    assert summary.startswith("### tracereplay: suite regressions"), summary
    assert "| fixed | 0 |" in summary and "Is it raining in Atlantis?" in summary
