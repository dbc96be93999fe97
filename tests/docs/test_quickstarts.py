"""Each quickstart (``docs/quickstart/<framework>.md``) runs as a reader runs it, in the
framework's pinned venv (``.venvs/<fw>``, ``make frameworks``), in an empty directory:

- its ``pip install`` line names packages that venv has (the line is not run: the venv is the
  install, pinned);
- each ``python`` block whose first line is ``# <file>.py`` is written to that file;
- each ``console`` block's ``$ `` commands run in order, with the venv first on ``PATH`` and the
  agent's model answered by the scripted OpenAI-compatible fake on loopback
  (``OPENAI_BASE_URL``, LlamaIndex's ``OPENAI_API_BASE``, as a real key and base URL would
  be); a command exits 0, or 1 when the output it shows has a ``FAILED`` case; every output
  line the page shows (``...`` marks what it trimmed) is in what the command printed, ids,
  numbers, words cut to fit and column padding aside;
- an ``--llm recorded`` command sends nothing to the model (offline).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_blocks import Block, code_blocks
from docs.quickstart_pages import PAGES, QUICKSTARTS, ROOT, installed_names
from evaluate.framework_replay import fake_openai, framework_bin, weather

#: the question every quickstart's agent asks, and how the model answers it (two tools, three
#: rounds: the harness's multi-round weather script)
QUESTION = "Will it rain in Paris in the next two days?"
SCRIPT = {QUESTION: weather.SCRIPT[weather.QUESTIONS["multi_round"]]}

BOX = re.compile(r"[│┃┏┓┗┛┡┩└┘━─┳┻╇╈┼╭╮╰╯]")
ID = re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b|\b[0-9a-f]{8}\b")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: a word cut short to fit (a table cell, a long value)
CUT = re.compile(r"\S*…\S*")


def normalized(text: str) -> str:
    """``text`` without what differs from run to run or with the terminal: table borders, ids,
    numbers (times, durations), words cut to fit, line breaks and padding."""
    text = CUT.sub(" ", BOX.sub(" ", text))
    return " ".join(NUMBER.sub("N", ID.sub("ID", text)).split())


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """A console block as (command, the output lines shown after it); ``\\`` continues."""
    steps: list[tuple[str, list[str]]] = []
    lines = iter(body.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(line)
    return steps


@pytest.fixture
def model() -> Iterator[tuple[fake_openai.FakeModel, str]]:
    """The scripted model on loopback and its base URL."""
    server, url = fake_openai.start(SCRIPT)
    try:
        yield server.model, url
    finally:
        server.shutdown()


def test_every_quickstart_is_tested_and_linked() -> None:
    assert sorted(p.name for p in QUICKSTARTS.glob("*.md")) == sorted(PAGES)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"docs/quickstart/{page}" in readme, f"README.md does not link {page}"


def test_shown_output_matches_what_differs_only_by_ids_numbers_and_width() -> None:
    shown = "│ 0 │ aaa0acbe │ FAILED │  0.83 │   237 │ Will it rain in Paris in the next…"
    printed = "│ 0 │ 43a559ad │ FAILED │  0.83 │  2205 │ Will it rain in Paris in the nex…│\n"
    assert normalized(shown) in normalized(printed)
    assert normalized(shown) not in normalized(printed.replace("FAILED", "PASSED"))
    wrapped = "get_forecast(city='Paris',\n  days=2): never called"
    assert normalized("get_forecast(city='Paris', days=2): never called") in normalized(wrapped)
    assert console_steps("$ a \\\n  --b\nout\n...\n$ c\n") == [
        ("a  --b", ["out", "..."]),
        ("c", []),
    ]


def _assert_installable(page: str, blocks: list[Block], bin_dir: Path) -> None:
    """The page's ``pip install`` names tracereplay and only distributions the venv has."""
    names = [n for b in blocks if b.lang == "sh" for n in installed_names(b)]
    assert "tracereplay" in names, f"{page}: no pip install of tracereplay"
    found = subprocess.run(
        [str(bin_dir / "python"), "-c",
         "import importlib.metadata as m, sys; [m.version(n) for n in sys.argv[1:]]", *names],
        capture_output=True, text=True,
    )  # fmt: skip
    assert found.returncode == 0, f"{page}: pip install names a package the venv lacks: {found}"


def _write_files(blocks: list[Block], work: Path) -> None:
    for block in blocks:
        first = block.body.splitlines()[0] if block.body else ""
        if block.lang == "python" and re.fullmatch(r"# [\w./-]+\.py", first):
            (work / first[2:]).write_text(block.body, encoding="utf-8")


def _reader_env(bin_dir: Path, url: str) -> dict[str, str]:
    """A shell with the framework venv first on PATH and the model at ``url``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        OPENAI_BASE_URL=url,
        OPENAI_API_BASE=url,  # LlamaIndex's name for it
        OPENAI_API_KEY="test",
        COLUMNS="100",
        CREWAI_DISABLE_TELEMETRY="true",  # the machine's settings, not the page's: no network
        CREWAI_TRACING_ENABLED="false",
    )
    return env


@pytest.mark.slow  # runs a framework's agent and the CLI in its venv
@pytest.mark.parametrize("page", sorted(PAGES))
def test_quickstart_runs_as_written(
    page: str, model: tuple[fake_openai.FakeModel, str], tmp_path: Path
) -> None:
    fake, url = model
    bin_dir = framework_bin(PAGES[page], "python").parent
    blocks = code_blocks(QUICKSTARTS / page)
    _assert_installable(page, blocks, bin_dir)
    _write_files(blocks, tmp_path)
    env = _reader_env(bin_dir, url)
    steps = [s for b in blocks if b.lang == "console" for s in console_steps(b.body)]
    assert steps, f"{page}: no console block"
    timings = []
    for command, shown in steps:
        asked = len(fake.requests)
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, timeout=180,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        timings.append(f"{time.monotonic() - started:5.1f}s  {command}")
        printed = done.stdout
        expected_code = 1 if any(line.startswith("FAILED") for line in shown) else 0
        assert done.returncode == expected_code, f"{page}: $ {command}\n{printed}"
        actual = normalized(printed)
        for line in shown:
            if line.strip() and line.strip() != "...":
                assert normalized(line) in actual, (
                    f"{page}: $ {command}\n{line!r} not in:\n{printed}"
                )
        if "--llm recorded" in command:
            assert len(fake.requests) == asked, f"{page}: $ {command} called the model"
    print("\n".join(timings))
