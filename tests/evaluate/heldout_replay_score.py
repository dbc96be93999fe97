"""Score replay on the held-out agents (a script, not a pytest test; it measures, it diagnoses
nothing).

For each held-out agent (``tests/fixtures/heldout/<name>``; ``openai_node`` is JavaScript and
skipped) and each captured shape (``payloads/<instrumentation>/<shape>``): the shape's payload
folder is ingested into a fresh DuckDB store by the main venv's CLI, its top-level live runs
promoted into the suite ``weather``, the suite scored in recorded mode, then replayed with
``--agent agent:ATTR --concurrency 1`` by the held-out venv's CLI (``.venvs/heldout_<name>``),
run with cwd and PYTHONPATH = the agent's folder and ``$WEATHER_TOOL_MARKS`` set to a file (the
harness tools write a line there when they really run).

Pass 1, ``--llm recorded``: the agent's model URL points at ``http://127.0.0.1:9`` (nothing
listens). Pass 2, live: the fake model server the capture script used (the harness's
``fake_openai`` or the folder's ``fake_bedrock`` / ``fake_mistral``) with the capture's script,
a fresh one per shape, and no ``--llm`` option. A shape scores 1 when the replay's verdict equals
the recorded verdict and no tool mark was written.

    .venv/bin/python tests/evaluate/heldout_replay_score.py [--pass recorded|live|both] [NAME ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HELDOUT = REPO / "tests" / "fixtures" / "heldout"
FRAMEWORKS = REPO / "tests" / "fixtures" / "frameworks"
HARNESS = FRAMEWORKS / "harness"
VENVS = REPO / ".venvs"
MAIN_PYTHON = REPO / ".venv" / "bin" / "python"
NOWHERE = "http://127.0.0.1:9"
TIMEOUT = 300


def _load(name: str, path: Path) -> Any:
    """A module loaded from ``path`` under ``name`` (the harness and the held-out folders have
    modules of the same names)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(HARNESS))  # fake_bedrock / fake_mistral import fake_openai from there
fake_openai = _load("fake_openai", HARNESS / "fake_openai.py")
weather = _load("weather", HARNESS / "weather.py")


def _capture_script(name: str) -> dict:
    """The model script of a capture that converses with its own names (``capture.script``)."""
    return _load(f"heldout_{name}_capture", HELDOUT / name / "capture.py").script(weather)


def _start_openai(script: Callable[[], dict]) -> Callable[[], tuple[Any, dict[str, str]]]:
    def start() -> tuple[Any, dict[str, str]]:
        server, url = fake_openai.start(script())
        return server, {"OPENAI_BASE_URL": url}

    return start


def _start_bedrock() -> tuple[Any, dict[str, str]]:
    fake = _load("heldout_fake_bedrock", HELDOUT / "bedrock" / "fake_bedrock.py")
    server, url = fake.start(weather.SCRIPT)
    return server, {"BEDROCK_ENDPOINT_URL": url}


def _start_anthropic() -> tuple[Any, dict[str, str]]:
    fake = _load("heldout_fake_anthropic", HARNESS / "fake_anthropic.py")
    server, url = fake.start(weather.SCRIPT)
    return server, {"ANTHROPIC_BASE_URL": url}


def _start_mistral() -> tuple[Any, dict[str, str]]:
    fake = _load("heldout_fake_mistral", HELDOUT / "mistral" / "fake_mistral.py")
    server, url = fake.start(weather.SCRIPT)
    return server, {"MISTRAL_SERVER_URL": url}


@dataclass
class Agent:
    """How a held-out agent is run (from its README, capture.py and agent.py)."""

    name: str
    instrumentation: str
    #: the ``agent.py`` attribute each shape's capture called (default ``weather_agent``)
    attrs: dict[str, str] = field(default_factory=dict)
    #: the environment the agent needs to build its client, its model URL at NOWHERE
    env: dict[str, str] = field(default_factory=dict)
    #: the live fake model: starts it, returns the server and the env that points at it
    live: Callable[[], tuple[Any, dict[str, str]]] | None = None
    #: the folder holding ``agent.py`` (cwd and PYTHONPATH), when not the held-out folder
    agent_dir: Path | None = None

    @property
    def folder(self) -> Path:
        return HELDOUT / self.name

    @property
    def run_dir(self) -> Path:
        return self.agent_dir or self.folder

    @property
    def venv(self) -> Path:
        return VENVS / f"heldout_{self.name}"

    def shapes(self) -> list[str]:
        root = self.folder / "payloads" / self.instrumentation
        return sorted(p.name for p in root.iterdir() if p.is_dir())


OPENAI_ENV = {"OPENAI_BASE_URL": f"{NOWHERE}/v1", "OPENAI_API_KEY": "test"}

AGENTS = [
    Agent(
        "agno",
        "openinference",
        attrs={"sub_agent": "weather_team"},
        env={**OPENAI_ENV, "AGNO_TELEMETRY": "false"},
        live=_start_openai(lambda: _capture_script("agno")),
    ),
    Agent(
        "bedrock",
        "openllmetry",
        env={
            "BEDROCK_ENDPOINT_URL": NOWHERE,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        },
        live=_start_bedrock,
    ),
    Agent(
        "crewai_anthropic",
        "openinference",
        attrs={s: "crew" for s in ("multi_round", "tool_error", "parallel", "provider_error")},
        env={
            "ANTHROPIC_BASE_URL": NOWHERE,
            "ANTHROPIC_API_KEY": "test",
            "CREWAI_DISABLE_TELEMETRY": "true",
            "CREWAI_TRACING_ENABLED": "false",
        },
        live=_start_anthropic,
    ),
    Agent(
        "haystack",
        "openinference",
        attrs={"streaming": "streaming_agent", "sub_agent": "weather_agent_with_forecaster"},
        env={**OPENAI_ENV, "HAYSTACK_TELEMETRY_ENABLED": "False"},
        live=_start_openai(lambda: weather.SCRIPT),
    ),
    Agent(
        "llamaindex_openllmetry",
        "openllmetry",
        env=dict(OPENAI_ENV),
        live=_start_openai(lambda: weather.SCRIPT),
        # no agent.py of its own: the capture runs ../../frameworks/llama_index/agent.py
        agent_dir=FRAMEWORKS / "llama_index",
    ),
    Agent(
        "mistral",
        "openinference",
        attrs={"streaming": "weather_agent_streaming"},
        env={"MISTRAL_SERVER_URL": NOWHERE, "MISTRAL_API_KEY": "test"},
        live=_start_mistral,
    ),
    Agent(
        "semantic_kernel",
        "semantic_kernel",
        attrs={"sub_agent": "weather_agent_with_forecaster"},
        env={
            **OPENAI_ENV,
            "AZURE_TELEMETRY_DISABLED": "true",
            "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true",
        },
        live=_start_openai(lambda: _capture_script("semantic_kernel")),
    ),
]


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    except subprocess.TimeoutExpired as err:
        return subprocess.CompletedProcess(cmd, -9, str(err.stdout or ""), f"timeout: {err}")


def main_cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tracereplay --db DB ARGS`` of the main venv."""
    return _run([str(MAIN_PYTHON), "-m", "tracereplay", "--db", str(db), *args])


def _tail(result: subprocess.CompletedProcess[str], n: int = 400) -> str:
    text = (result.stdout + result.stderr).strip()
    return " | ".join(text.splitlines()[-4:])[-n:]


@dataclass
class Recorded:
    db: Path | None
    verdict: str | None
    error: str | None = None


def record(agent: Agent, shape: str, work: Path) -> Recorded:
    """Ingest, promote and score the shape in recorded mode, in a fresh store."""
    db = work / "store.duckdb"
    folder = agent.folder / "payloads" / agent.instrumentation / shape
    said = []
    for args in (
        ("ingest", str(folder)),
        ("promote", "--where", "kind = 'live' AND parent_run_id IS NULL", "--suite", "weather"),
    ):
        result = main_cli(db, *args)
        if result.returncode != 0:
            return Recorded(None, None, f"{args[0]} failed: {_tail(result)}")
        said.append(f"{args[0]}: {_tail(result, 200)}")
    out = work / "store-recorded.json"
    result = main_cli(db, "eval", "weather", "--json", str(out))
    if not out.exists():
        return Recorded(None, None, f"recorded eval wrote no json ({'; '.join(said)})")
    cases = json.loads(out.read_text())["cases"]
    if len(cases) != 1:
        return Recorded(db, None, f"{len(cases)} cases promoted")
    return Recorded(db, cases[0]["status"])


def _reason(case: dict) -> str:
    """The eval's one-line reason for a case (the first it gives)."""
    for key in ("reason", "error", "message"):
        if case.get(key):
            return str(case[key]).splitlines()[0]
    for rep in case.get("repetitions") or []:
        for key in ("reason", "error", "message"):
            if rep.get(key):
                return str(rep[key]).splitlines()[0]
    return ""


@dataclass
class Row:
    agent: str
    shape: str
    recorded: str | None
    replayed: str | None
    marks: int
    reason: str = ""
    #: every LLM call of the replay kept once, with what answered it (issue 50): no llm_calls
    #: row of the replay's trace without a source, and offline as many answered by the
    #: recording as the eval counts
    calls_kept: bool = False

    @property
    def score(self) -> int:
        return int(self.recorded is not None and self.replayed == self.recorded and self.marks == 0)

    def line(self) -> str:
        text = (
            f"{self.agent:<24} {self.shape:<15} recorded={self.recorded} "
            f"replay={self.replayed} marks={self.marks}"
        )
        if not self.score and self.reason:
            text += f"  reason: {self.reason}"
        return text


def replay(agent: Agent, shape: str, rec: Recorded, work: Path, mode: str) -> Row:
    """Replay the recorded store's copy with the held-out venv's CLI, ``mode`` recorded/live."""
    if rec.db is None or rec.verdict is None:
        return Row(agent.name, shape, rec.verdict, None, 0, rec.error or "not recorded")
    cli = agent.venv / "bin" / "tracereplay"
    if not cli.exists():
        return Row(agent.name, shape, rec.verdict, None, 0, f"{cli} missing")
    db = work / f"replay-{mode}.duckdb"
    for suffix in ("", ".wal"):
        src = Path(str(rec.db) + suffix)
        if src.exists():
            shutil.copyfile(src, Path(str(db) + suffix))
    marks = work / f"replay-{mode}-tool-marks.txt"
    marks.write_text("")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY", "MISTRAL_", "AWS_", "BEDROCK_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    env.update(agent.env)
    env.update(WEATHER_TOOL_MARKS=str(marks), PYTHONPATH=str(agent.run_dir))
    server = None
    args = ["--llm", "recorded"]
    if mode == "live":
        assert agent.live is not None
        server, live_env = agent.live()
        env.update(live_env)
        args = []
    out = work / f"replay-{mode}.json"
    attr = agent.attrs.get(shape, "weather_agent")
    cmd = [str(cli), "--db", str(db), "eval", "weather", "--agent", f"agent:{attr}",
           "--concurrency", "1", *args, "--json", str(out)]  # fmt: skip
    try:
        result = _run(cmd, cwd=str(agent.run_dir), env=env)
    finally:
        if server is not None:
            server.shutdown()
    n_marks = len([line for line in marks.read_text().splitlines() if line])
    if not out.exists():
        return Row(agent.name, shape, rec.verdict, None, n_marks,
                   f"exit {result.returncode}, no json: {_tail(result)}")  # fmt: skip
    cases = json.loads(out.read_text())["cases"]
    if len(cases) != 1:
        return Row(agent.name, shape, rec.verdict, None, n_marks, f"{len(cases)} cases")
    (case,) = cases
    row = Row(agent.name, shape, rec.verdict, case["status"], n_marks, _reason(case))
    row.calls_kept = calls_kept(db, case)
    return row


def calls_kept(db: Path, case: dict) -> bool:
    rep = case["repetitions"][0]
    if not rep.get("run_id"):
        return False
    import tracereplay.ingest  # noqa: F401  (registers the drain open_store runs)
    from tracereplay.store.open import open_store

    with open_store(db) as store:
        calls = store.query_dicts(
            "SELECT source FROM llm_calls WHERE trace_id = "
            "(SELECT trace_id FROM runs WHERE run_id = ?)",
            [rep["run_id"]],
        )
    llm = (rep.get("replay") or {}).get("llm")
    answered = sum(c["source"] == "recording" for c in calls)
    return (
        bool(calls)
        and all(c["source"] for c in calls)
        and (llm is None or answered == llm["answered"])
    )


def score_shape(agent: Agent, shape: str, work: Path, modes: list[str]) -> dict[str, Row]:
    work.mkdir(parents=True)
    rec = record(agent, shape, work)
    rows: dict[str, Row] = {}
    for mode in modes:
        if mode == "live" and agent.live is None:
            continue
        rows[mode] = replay(agent, shape, rec, work, mode)
    return rows


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="held-out agents (default: all Python ones)")
    parser.add_argument("--pass", dest="passes", choices=["recorded", "live", "both"],
                        default="both")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="shapes scored at once")
    parser.add_argument("--keep", action="store_true", help="keep the stores (prints where)")
    opts = parser.parse_args(argv)
    modes = ["recorded", "live"] if opts.passes == "both" else [opts.passes]
    agents = [a for a in AGENTS if not opts.names or a.name in opts.names]
    tmp = Path(tempfile.mkdtemp(prefix="heldout-replay-"))
    jobs = [(a, s) for a in agents for s in a.shapes()]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(score_shape, a, s, tmp / a.name / s, modes) for a, s in jobs]
        results = [f.result() for f in futures]
    for mode in modes:
        rows = [r[mode] for r in results if mode in r]
        label = "score" if mode == "recorded" else "score live"
        print(f"== {'--llm recorded' if mode == 'recorded' else 'live fake model'} ==")
        for row in rows:
            print(row.line())
        if mode == "live":
            skipped = [a.name for a in agents if a.live is None]
            if skipped:
                print(f"skipped (no fake model server to start): {', '.join(skipped)}")
        print(f"{label} {sum(r.score for r in rows)}/{len(rows)}")
        kept = [f"{r.agent}/{r.shape}" for r in rows if not r.calls_kept]
        print(f"LLM calls kept {len(rows) - len(kept)}/{len(rows)}" + (
            f" (not: {', '.join(kept)})" if kept else ""))  # fmt: skip
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if opts.keep:
        print(f"stores kept in {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
