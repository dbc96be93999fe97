"""The worked examples of docs/evaluating.md's *Which replay mode* run as written: each block
marked ``<!-- worked example: MODE -->``, command by command, on a store as ``make demo`` leaves
it for them (the weather agent on the OpenAI client recorded against the scripted model, suite
``weather-offline``, as examples/demo_offline.sh does), from the repository root with
``PYTHONPATH=examples/weather_agent``. Offline (nothing listens at ``OPENAI_BASE_URL``), except
the fork, whose live part goes to the scripted model. Each mode says what the docs say it does.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from offline_store import offline_store, scripted_server

from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weather_agent"
DOC = (ROOT / "docs" / "evaluating.md").read_text(encoding="utf-8")
BLOCKS = dict(re.findall(r"^<!-- worked example: ([\w-]+) -->\n```sh\n(.*?)^```", DOC, re.S | re.M))
NOWHERE = "http://127.0.0.1:9/v1"

#: what each mode's output must say (docs/evaluating.md says it)
SAYS = {
    "recorded": ["3 of 3 cases passed"],
    "live-tools": ["result(s) as recorded, 0 differ"],
    "fork": [
        "fork at LLM call 1: call 1 answered from the recording",
        "prompt drift: LLM call 2 (live): model: recorded scripted-weather-1",
        'no recording for tool call get_forecast({"city":"Tokyo","days":5})',
        "ran for real",
    ],
    "replay": ["suite replay:weather_openai", "ran for real"],
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    env.update(PYTHONPATH=str(EXAMPLE), COLUMNS="200", **extra)
    return env


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Suite ``weather-offline`` as examples/demo_offline.sh makes it (a copy of the session's)."""
    return offline_store(tmp_path_factory)


def test_every_mode_has_a_worked_example() -> None:
    assert set(BLOCKS) == set(SAYS)


@pytest.mark.parametrize("mode", sorted(SAYS))
def test_the_worked_example_runs_as_written(store: Path, mode: str) -> None:
    with open_store(store) as s:
        [(run_id,)] = s.con.execute(
            "SELECT run_id FROM runs WHERE agent_name = 'weather_openai' AND kind = 'live'"
            " ORDER BY started_at LIMIT 1"
        ).fetchall()
    server = url = None
    if mode == "fork":
        server, url = scripted_server().start()
    env = _env(TRACEREPLAY_DB=str(store), OPENAI_BASE_URL=url or NOWHERE)
    if url:
        env["OPENAI_API_KEY"] = "demo"
    said = ""
    try:
        for line in BLOCKS[mode].splitlines():
            expected = 1 if re.search(r"#.*exit code 1", line) else 0  # a case not PASSED
            line = re.sub(r"\s+#.*$", "", line).strip()
            if not line:
                continue
            argv = shlex.split(line.replace("RUN_ID", run_id))
            assert argv[0] == "tracereplay"
            done = subprocess.run(
                [sys.executable, "-m", "tracereplay", *argv[1:]],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            out = done.stdout + done.stderr
            assert done.returncode == expected, f"{line}\n{out}"
            said += " ".join(out.split()) + "\n"
    finally:
        if server is not None:
            server.shutdown()
    for text in SAYS[mode]:
        assert text in said, f"{mode}: {text!r} not in\n{said}"
