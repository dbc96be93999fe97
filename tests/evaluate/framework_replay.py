"""Replaying the framework fixtures' agents as a user would, through the CLI.

Each framework's real agent module (``tests/fixtures/frameworks/<fw>/agent.py``, no tracereplay
import) is recorded (its captured OTLP payloads ingested), its top-level runs promoted into a
suite, scored in recorded mode, then replayed with ``tracereplay eval SUITE --agent agent:ATTR``
run by the framework's own venv (``.venvs/<fw>``, where the framework is installed; ``make
frameworks`` builds it) against the scripted fake model. The harness tools write to
``$WEATHER_TOOL_MARKS`` when they really run: the file stays empty when replay is airtight.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store.open import open_store

REPO = Path(__file__).resolve().parents[2]
#: the captures and agents, and the venvs they run in: ``make test-latest`` points them at
#: captures and venvs made with the newest releases (tests/fixtures/frameworks/latest.py)
FRAMEWORKS = Path(
    os.environ.get("TRACEREPLAY_FRAMEWORK_FIXTURES") or REPO / "tests" / "fixtures" / "frameworks"
)
VENVS = Path(os.environ.get("TRACEREPLAY_VENVS") or REPO / ".venvs")
HARNESS = FRAMEWORKS / "harness"


def _harness_module(name: str) -> Any:
    """A harness module, loaded under its own name (tests/sdk has a ``fake_openai`` too)."""
    spec = importlib.util.spec_from_file_location(f"harness_{name}", HARNESS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fake_openai = _harness_module("fake_openai")
weather = _harness_module("weather")


def framework_bin(framework: str, tool: str = "tracereplay") -> Path:
    """``.venvs/<framework>/bin/<tool>``; skips the test when that venv is not built."""
    path = VENVS / framework / "bin" / tool
    if not path.exists():
        pytest.skip(f"{path} does not exist: run `make frameworks` to build the framework venvs")
    return path


def run_in_venv(
    framework: str,
    cwd: Path,
    script: str,
    *args: str,
    paths: tuple[Path, ...] = (),
    timeout: int = 120,
) -> str:
    """``script`` run by the framework venv's python (``args`` its argv; this checkout's
    tracereplay and ``paths`` importable); its stdout, once it exited 0."""
    result = subprocess.run(
        [str(framework_bin(framework, "python")), "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (REPO, *paths)))},
        timeout=timeout,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def node_modules(fixture: Path) -> None:
    """``node_modules`` of a Node fixture, as ``make frameworks`` builds it (``npm ci``, once,
    stamped); skips the test only when node or npm is missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed (make test installs them where it can)")
    stamp = fixture / "node_modules" / ".installed-stamp"
    with open(fixture / ".npm-ci.lock", "w") as lock:  # another worker may be installing it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=fixture,
                check=True,
                capture_output=True,
                timeout=600,
            )
            stamp.touch()


def main_cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tracereplay --db DB ARGS`` of the main venv (no framework needed)."""
    return _run([sys.executable, "-m", "tracereplay", "--db", str(db), *args])


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)


def _cli(db: Path, *args: str) -> Any:
    """``tracereplay --db DB ARGS`` in this process (the recording steps are not about the
    process: no interpreter and import to pay for each); has ``exit_code`` and ``output``."""
    return CliRunner().invoke(app, ["--db", str(db), *args])


@pytest.fixture
def fake_model() -> Iterator[str]:
    """The scripted OpenAI-compatible model on loopback; yields its base URL."""
    server, url = fake_openai.start(weather.SCRIPT)
    try:
        yield url
    finally:
        server.shutdown()


@dataclass
class Recorded:
    db: Path
    suite: str
    cases: int


def record_suite(db: Path, framework: str, instrumentation: str, shapes: list[str]) -> Recorded:
    """Ingest the captured payloads of ``shapes`` (``FRAMEWORKS/<framework>/payloads/
    <instrumentation>/<shape>``), promote every top-level live run."""
    folders = [str(FRAMEWORKS / framework / "payloads" / instrumentation / s) for s in shapes]
    ingested = _cli(db, "ingest", *folders)
    assert ingested.exit_code == 0, ingested.output
    promoted = _cli(
        db, "promote", "--where", "kind = 'live' AND parent_run_id IS NULL", "--suite", "weather"
    )
    assert promoted.exit_code == 0, promoted.output
    n = len(rows(db, "SELECT * FROM eval_cases"))
    return Recorded(db, "weather", n)


#: where ``recorded_copy`` keeps the stores it made (tests/evaluate/conftest.py names a folder
#: of the test run, shared by the xdist workers); None: every call records afresh
STORES: Path | None = None


def recorded_copy(
    db: Path, framework: str, instrumentation: str, shapes: list[str]
) -> tuple[Recorded, dict[str, str]]:
    """``record_suite`` then the recorded eval (``{query: status}``), as a copy at ``db`` of a
    store made once per test run for these (framework, instrumentation, shapes): the same
    store a test would make itself (ingested, promoted, scored in recorded mode once)."""
    if STORES is None:
        recorded = record_suite(db, framework, instrumentation, shapes)
        return recorded, verdicts(eval_doc(db, db.parent / "recorded.json"))
    folder = STORES / "-".join([framework, instrumentation, *shapes])
    STORES.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:  # another worker may be making it
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "made.json"  # written last: the store is complete
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            template = record_suite(folder / "store.duckdb", framework, instrumentation, shapes)
            scored = _cli(template.db, "eval", "weather", "--json", str(folder / "doc.json"))
            assert (folder / "doc.json").exists(), scored.output
            doc = json.loads((folder / "doc.json").read_text())
            done.write_text(json.dumps({"cases": template.cases, "verdicts": verdicts(doc)}))
    made = json.loads(done.read_text())
    for name in ("store.duckdb", "store.duckdb.wal"):
        if (folder / name).exists():
            shutil.copyfile(
                folder / name, db.with_name(db.name + name.removeprefix("store.duckdb"))
            )
    return Recorded(db, "weather", made["cases"]), made["verdicts"]


def eval_doc(db: Path, out: Path, *args: str, cli: list[str] | None = None, **kwargs: Any) -> dict:
    """``tracereplay eval weather ARGS --json OUT`` (by ``cli``, default the main venv's)."""
    cmd = [*(cli or [sys.executable, "-m", "tracereplay"]), "--db", str(db), "eval", "weather"]
    result = _run([*cmd, *args, "--json", str(out)], **kwargs)
    assert out.exists(), result.stdout + result.stderr
    doc = json.loads(out.read_text())
    doc["_output"] = result.stdout + result.stderr
    return doc


def replay(
    db: Path,
    tmp: Path,
    framework: str,
    attr: str,
    base_url: str,
    *args: str,
    venv: str | None = None,
) -> tuple[dict, list[str]]:
    """Replay the suite with ``--agent agent:ATTR`` (``ATTR`` may be ``module:attr``) from the
    framework's venv (``venv``, when it is not named as the fixture folder); the eval's JSON
    document and the tool marks (calls of harness tools that really ran)."""
    marks = tmp / "tool-marks.txt"
    marks.write_text("")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="test",
        WEATHER_TOOL_MARKS=str(marks),
        # this checkout's tracereplay before the one the venv has installed (another
        # checkout's, when the venvs are shared by worktrees)
        PYTHONPATH=os.pathsep.join([str(REPO), str(FRAMEWORKS / framework)]),
        LITELLM_LOCAL_MODEL_COST_MAP="True",  # litellm (Google ADK's model): no download
    )
    out = tmp / f"replay-{len(list(tmp.glob('replay-*.json')))}.json"
    doc = eval_doc(
        db,
        out,
        "--agent",
        attr if ":" in attr else f"agent:{attr}",
        # each agent process imports the framework (seconds of CPU for the biggest) and the
        # scripted cases take well under that: a second process would only import it again
        # while the first runs every case (the suite's workers keep both cores busy already);
        # several agent processes are tested with small agents (test_agents_that_exit.py)
        "--concurrency",
        "1",
        *args,
        cli=[str(framework_bin(venv or framework))],
        cwd=str(FRAMEWORKS / framework),
        env=env,
    )
    return doc, [line for line in marks.read_text().splitlines() if line]


def verdicts(doc: dict) -> dict[str, str]:
    """``{query: status}`` of an eval document."""
    return {c["query"]: c["status"] for c in doc["cases"]}


def rows(db: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with open_store(db) as store:
        return store.query_dicts(sql, params or [])


def assert_replay_runs_marked(db: Path, doc: dict) -> None:
    """Every case's scored run is stored as a replay of that eval run and case, and no run of
    a replay's trace is stored as live (``tracereplay runs`` never shows a replay as live)."""
    eval_run_id = doc["eval_run"]["eval_run_id"]
    for case in doc["cases"]:
        run_id = case["repetitions"][0].get("run_id")
        assert run_id, case
        (run,) = rows(db, "SELECT kind, eval_run_id, case_id FROM runs WHERE run_id = ?", [run_id])
        assert run == {"kind": "replay", "eval_run_id": eval_run_id, "case_id": case["case_id"]}
        # every LLM call the agent made is kept once, with what answered it: a call an
        # instrumentation recorded too is one row (a row without a source would be its double)
        # (the runs of the replay's trace: a sub-agent's calls are its own run's)
        calls = rows(
            db,
            "SELECT run_id, round, source FROM llm_calls WHERE trace_id = "
            "(SELECT trace_id FROM runs WHERE run_id = ?) ORDER BY run_id, round",
            [run_id],
        )
        assert calls and all(c["source"] for c in calls), (case["query"], calls)
        llm = case["repetitions"][0]["replay"].get("llm")
        if llm is not None and llm["fork_round"] is None:
            answered = sum(c["source"] == "recording" for c in calls)
            assert answered == llm["answered"], (case["query"], calls, llm)
    live_in_replays = rows(
        db,
        "SELECT run_id, agent_name FROM runs WHERE kind = 'live' AND trace_id IN "
        "(SELECT trace_id FROM runs WHERE eval_run_id = ?)",
        [eval_run_id],
    )
    assert live_in_replays == []


def replays_as_recorded(
    tmp: Path,
    framework: str,
    instrumentation: str,
    shapes: list[str],
    base_url: str,
    attr: str = "weather_agent",
    *,
    venv: str | None = None,
    payloads: str | None = None,
) -> tuple[Path, dict]:
    """The weather agent's recorded ``shapes`` promoted into a suite, scored in recorded mode,
    then replayed with ``--agent agent:ATTR`` from the framework's venv. Asserts what
    every framework must give (the provider failure FAILED, the recorded verdicts again, no
    tool run for real, the replay runs marked) and returns the store and the replay's document.
    ``payloads``: the fixture folder the recording comes from, when not ``framework``'s (the
    same agent traced by another instrumentation, replayed from this venv)."""
    db = tmp / "store.duckdb"
    recorded, expected = recorded_copy(db, payloads or framework, instrumentation, shapes)
    assert recorded.cases == len(shapes)
    if "provider_error" in shapes:
        assert expected[weather.QUESTIONS["provider_error"]] == "FAILED"
    doc, marks = replay(db, tmp, framework, attr, base_url, venv=venv)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    assert_replay_runs_marked(db, doc)
    return db, doc


#: a port where nothing listens: an offline replay's request that reached the network fails
NOWHERE = "http://127.0.0.1:9/v1"


def replays_offline(
    tmp: Path,
    framework: str,
    instrumentation: str,
    shapes: list[str],
    attr: str,
    *,
    venv: str | None = None,
    payloads: str | None = None,
) -> tuple[Path, dict]:
    """``shapes`` recorded and promoted, then replayed from the framework's venv with
    ``--agent agent:ATTR --llm recorded`` and no model at all: no tool run for real, the
    recorded verdicts, every LLM call answered with no drift and none left unused. Returns the
    store and the replay's document."""
    db = tmp / "store.duckdb"
    recorded, expected = recorded_copy(db, payloads or framework, instrumentation, shapes)
    assert recorded.cases == len(shapes)
    doc, marks = replay(db, tmp, framework, attr, NOWHERE, "--llm", "recorded", venv=venv)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == [], llm
    assert_replay_runs_marked(db, doc)
    return db, doc


def replay_tool_calls(db: Path, doc: dict) -> dict[str, list[tuple[str, str | None]]]:
    """``{query: [(tool_name, error), ...]}``: the tool calls stored for each case's replay run
    (what the replay's own spans recorded, whatever instrumentation traced the agent)."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for case in doc["cases"]:
        run_id = case["repetitions"][0].get("run_id")
        calls = rows(
            db,
            "SELECT tool_name, error FROM tool_calls WHERE run_id = ? ORDER BY position",
            [run_id],
        )
        out[case["query"]] = [(c["tool_name"], c["error"]) for c in calls]
    return out
