"""Replay of real framework agents against the floor: the agent itself, run without tracereplay.

For pydantic-ai, LangGraph, the OpenAI Agents SDK and CrewAI (their pinned venvs,
``$TRACEREPLAY_VENVS/<name>``, else ``.venvs/<name>``; a framework without one is skipped):

1. **Record**: the framework's weather agent (``tests/fixtures/frameworks/<name>/agent.py``) is
   run on ``--cases`` distinct queries (two tools, three LLM calls each) against the loopback
   fake OpenAI server (``tests/fixtures/frameworks/harness/fake_openai.py``), traced by the
   framework's instrumentation (as its fixture's ``capture.py`` sets it up) into a DuckDB store's
   spool (``SpoolSpanExporter``); every top-level run is then promoted into the suite ``bench``.
2. **Replay**: ``python -m tracereplay eval bench --agent agent:ATTR --llm recorded`` run by the
   framework venv's python (tracereplay from this checkout, by ``PYTHONPATH``), on a fresh copy
   of the store each time, with no model server at all.
3. **Floor**: one process of the framework venv runs the same agent object on the same queries,
   as tracereplay's adapter calls it, its LLM answered by the same fake server (in that process)
   with the same answers and its tools plain functions; no tracereplay, no instrumentation.

Wall and CPU time (the process and every child it waited for) of both, pairs alternated; each
line gives the best of its pairs as ratios to the floor of the same run (targets: wall at most
1.2x, CPU per case at most 1.3x). No assertion: figures, not a test.

``--breakdown``: where the replay's CPU beyond the floor goes: each process of the replay by its
role (the eval, the fork server, the agent processes: sampled from /proc), what importing the
agent costs (each agent process pays it; the floor once), and the floor again with the
framework's instrumentation on (its spans exported nowhere): the spans a replay needs.

``--vcr`` (issue 53, 2): the same cases as pytest tests, each replaying its HTTP cassette with
vcrpy through pytest-recording (``--record-mode=none``; cassettes recorded from the fake server
first; the tools run as plain functions), against ``pytest --tracereplay bench
--tracereplay-agent ... --tracereplay-llm recorded``, in one venv made for it in the temporary
folder (the framework venv's packages by a ``.pth``, plus ``VCR_PINS``), pairs alternated.

    python benchmarks/frameworks.py [--cases 500] [--pairs 3] [--only pydantic_ai,crewai]
    python benchmarks/frameworks.py --quick        # 100 cases, one pair, one line per framework
    python benchmarks/frameworks.py --breakdown --vcr --keep /tmp/stores   # stores kept, reused

``benchmarks/peers.py`` runs ``bench`` and ``against_vcr`` of every framework as rows of its
table (its pairs; ``--quick``: this file's).

This file is also the child process of each step (``--child record|floor``), run by the
framework venv's python: it imports nothing of tracereplay at module level.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "frameworks"
HARNESS = FIXTURES / "harness"
VENVS = Path(os.environ.get("TRACEREPLAY_VENVS") or REPO / ".venvs")

#: ``--agent`` of each framework's replay (its fixture's agent module)
ATTRS = {
    "pydantic_ai": "agent:weather_agent",
    "langgraph": "agent:weather_agent",
    "openai_agents": "agent:weather_agent",
    "crewai": "agent:crew",
}
#: where a request that reached the network would go in replay: nothing listens on port 9
NOWHERE = "http://127.0.0.1:9/v1"
#: cases and pairs of a run, and of a ``--quick`` one (``benchmarks/peers.py`` uses them too)
CASES, PAIRS = 500, 3
QUICK_CASES, QUICK_PAIRS = 100, 1


# ------------------------------------------------------------------------- the cases
def queries(n: int) -> list[tuple[str, str, int]]:
    """``n`` distinct questions (query, city, days): each one two tools over three LLM calls."""
    cities = ("Paris", "Rome", "Oslo", "Lisbon", "Berlin", "Zurich")
    return [
        (
            f"What is the weather in {cities[i % 6]}, and will it rain in the next"
            f" {2 + i % 5} days? (case {i})",
            cities[i % 6],
            2 + i % 5,
        )
        for i in range(n)
    ]


def script(n: int) -> dict[str, list[dict[str, Any]]]:
    """The fake model's answers to the ``n`` questions (the same in recording and floor)."""
    return {
        q: [
            {"tools": [["get_weather", {"city": city}]]},
            {"tools": [["get_forecast", {"city": city, "days": days}]]},
            {"text": f"{city}: see the forecast for {days} days. ({q.rsplit('(', 1)[1]}"},
        ]
        for q, city, days in queries(n)
    }


def child_env(framework: str) -> dict[str, str]:
    """The environment of every process of a framework's steps."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY", "PYTHONPATH"))
    }
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO), str(FIXTURES / framework)]),
        OPENAI_BASE_URL=NOWHERE,
        OPENAI_API_KEY="test",
        CREWAI_DISABLE_TELEMETRY="true",
        CREWAI_TRACING_ENABLED="false",
    )
    return env


# ------------------------------------------------------------ child: in the framework venv
def _instrument(framework: str, provider: Any) -> None:
    """The framework's instrumentation, as its fixture's capture.py sets it up."""
    if framework == "pydantic_ai":
        from pydantic_ai import Agent
        from pydantic_ai.models.instrumented import InstrumentationSettings

        Agent.instrument_all(InstrumentationSettings(include_content=True))
    elif framework == "langgraph":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
    elif framework == "openai_agents":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    elif framework == "crewai":
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)


def _runner(framework: str, agent: Any) -> Callable[[str], str]:
    """One case as tracereplay's adapter of the framework runs it (replay/frameworks/)."""
    if framework == "crewai":
        return lambda q: agent.crew.copy().kickoff(inputs={"query": q}).raw
    if framework == "pydantic_ai":

        async def run(q: str) -> str:
            return (await agent.weather_agent.run(q)).output
    elif framework == "langgraph":

        async def run(q: str) -> str:
            state = await agent.weather_agent.ainvoke(
                {"messages": [{"role": "user", "content": q}]}
            )
            return state["messages"][-1].text
    else:
        from agents import Runner

        async def run(q: str) -> str:
            return (await Runner.run(agent.weather_agent, q)).final_output

    loop = asyncio.new_event_loop()
    return lambda q: loop.run_until_complete(run(q))


def child(step: str, framework: str, n: int, db: str | None) -> None:
    """``record``: the agent traced into ``db``'s spool; ``floor``: the agent alone;
    ``spans``: the agent traced by its instrumentation into an exporter that drops the spans;
    ``import``: the agent module imported, nothing run."""
    if step == "import":
        import agent  # noqa: F401

        return
    sys.path.insert(0, str(HARNESS))
    import fake_openai

    # one segment per answer: without it, the body waits for the ACK of the headers (Nagle's
    # algorithm against the client's delayed ACK), about 40 ms a call that no model costs
    fake_openai._Handler.disable_nagle_algorithm = True
    server, url = fake_openai.start(script(n))
    os.environ["OPENAI_BASE_URL"] = url
    provider = None
    if step == "floor":  # the Agents SDK's traces would go to OpenAI (retried until its exit)
        os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    if step in ("record", "spans"):
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        class Nowhere(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        if step == "record":
            from tracereplay.sdk import SpoolSpanExporter

            exporter: Any = SpoolSpanExporter(db)
        else:
            exporter = Nowhere()
        provider = TracerProvider(resource=Resource.create({"service.name": f"bench-{framework}"}))
        provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        _instrument(framework, provider)
    import agent  # after the environment: the model reads OPENAI_BASE_URL at import

    run = _runner(framework, agent)
    wrong = 0
    for q, city, _ in queries(n):
        wrong += city not in str(run(q))
    if provider is not None:
        provider.shutdown()
    server.shutdown()
    if wrong or len(server.model.requests) != 3 * n:
        raise SystemExit(
            f"{framework} {step}: {wrong} wrong answers, {len(server.model.requests)} calls"
        )


# ------------------------------------------------------------- parent: timed processes
def timed(
    cmd: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0, 1)
) -> tuple[float, float]:
    """Wall seconds of ``cmd`` and CPU seconds of it and every child it waited for (this
    process is the subreaper of what it leaves: their time counts once they are reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - t
        _reap()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in ok:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(cmd[:6])}... exited {proc.returncode}: {tail}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _reap() -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def _become_subreaper() -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def record(framework: str, python: Path, n: int, db: Path) -> float:
    """The recorded suite ``bench`` of ``n`` cases in ``db``; the seconds it took."""
    env = child_env(framework)
    cwd = FIXTURES / framework
    t = time.perf_counter()
    me = [str(python), __file__, "--child", "record", "--only", framework, "--cases", str(n)]
    done = subprocess.run([*me, "--db", str(db)], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"recording {framework}: {done.stdout[-1000:]}{done.stderr[-2000:]}")
    where = "kind = 'live' AND parent_run_id IS NULL"
    cli = [str(python), "-m", "tracereplay", "--db", str(db)]
    subprocess.run([*cli, "promote", "--where", where, "--suite", "bench"], cwd=cwd, env=env,
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t


def fresh_copy(store: Path) -> tuple[Path, Path]:
    """A copy of ``store`` for one replay (each eval adds its results), and its JSON's path."""
    work = store.with_name(f"work-{os.getpid()}.duckdb")
    shutil.copyfile(store, work)
    out = work.with_suffix(".json")
    out.unlink(missing_ok=True)
    return work, out


def remove_copy(work: Path) -> None:
    for path in (work, work.with_suffix(".json"), Path(f"{work}.wal"), Path(f"{work}.lock")):
        path.unlink(missing_ok=True)
    shutil.rmtree(f"{work}.spool", ignore_errors=True)


def replay_cmd(python: Path, framework: str, db: Path, out: Path, *extra: str) -> list[str]:
    return [
        str(python), "-m", "tracereplay", "--db", str(db), "eval", "bench",
        "--agent", ATTRS[framework], "--llm", "recorded", "--json", str(out), *extra,
    ]  # fmt: skip


def check_replay(out: Path, n: int) -> str:
    """What went wrong in a replay's document (every case must pass, every call answered)."""
    doc = json.loads(out.read_text())
    cases = doc["cases"]
    bad = [c for c in cases if c["status"] != "PASSED"]
    answered = sum(
        (c["repetitions"][0]["replay"].get("llm") or {}).get("answered", 0) for c in cases
    )
    problems = []
    if len(cases) != n:
        problems.append(f"{len(cases)} cases, not {n}")
    if bad:
        problems.append(f"{len(bad)} not PASSED (first: {bad[0]['status']})")
    if answered != 3 * n:
        problems.append(f"{answered} LLM calls answered, not {3 * n}")
    return "; ".join(problems)


def bench(framework: str, n: int, pairs: int, tmp: Path, extra: list[str]) -> dict[str, Any] | None:
    """The replay against the floor, printed as a line; the best wall and CPU seconds of each
    (``floor``, ``replay``: (wall, cpu)), the line, and what went wrong in a replay
    (``problems``). None when the framework's venv does not exist."""
    python = VENVS / framework / "bin" / "python"
    if not python.exists():
        print(f"{framework}: skipped ({python} does not exist)", flush=True)
        return None
    env = child_env(framework)
    cwd = FIXTURES / framework
    store = tmp / f"{framework}.duckdb"
    made = tmp / f"{framework}.cases"  # a --keep folder's store of n cases is used again
    took = 0.0
    if not store.exists() or not made.exists() or made.read_text() != str(n):
        for path in (store, Path(f"{store}.wal"), made):
            path.unlink(missing_ok=True)
        shutil.rmtree(f"{store}.spool", ignore_errors=True)
        took = record(framework, python, n, store)
        made.write_text(str(n))
    floors: list[tuple[float, float]] = []
    replays: list[tuple[float, float]] = []
    floor = [str(python), __file__, "--child", "floor", "--only", framework, "--cases", str(n)]
    wrong: list[str] = []
    for p in range(pairs):
        for step in ("floor", "replay") if p % 2 == 0 else ("replay", "floor"):
            if step == "floor":
                floors.append(timed(floor, cwd, env))
                continue
            work, out = fresh_copy(store)
            replays.append(timed(replay_cmd(python, framework, work, out, *extra), cwd, env))
            problems = check_replay(out, n)
            if problems:
                print(f"  {framework} replay: {problems}", flush=True)
                wrong.append(problems)
            remove_copy(work)
        if pairs > 1:
            (fw, fc), (rw, rc) = floors[-1], replays[-1]
            print(
                f"  {framework} pair {p + 1}: floor wall {fw:.2f} s cpu {fc:.2f} s; replay"
                f" wall {rw:.2f} s cpu {rc:.2f} s",
                flush=True,
            )
    (fw, fc), (rw, rc) = min(floors), min(replays)
    fcpu, rcpu = min(c for _, c in floors), min(c for _, c in replays)
    line = f"{framework}: wall {rw / fw:.2f}x floor, cpu {rcpu / fcpu:.2f}x floor"
    print(line, flush=True)
    if pairs > 1:
        print(
            f"  ({f'recorded {n} cases in {took:.1f} s; ' if took else ''}best floor wall {fw:.2f} s, cpu"
            f" {fcpu * 1000 / n:.1f} ms/case; best replay wall {rw:.2f} s, cpu"
            f" {rcpu * 1000 / n:.1f} ms/case)",
            flush=True,
        )
    return {"floor": (fw, fcpu), "replay": (rw, rcpu), "line": line, "problems": wrong}


def tree_cpu(cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """CPU seconds of each process of ``cmd``'s session by its role (``eval``, ``fork server``,
    ``agent``, ``other``), sampled from /proc every 20 ms (a process's last 20 ms are lost)."""
    tick = os.sysconf("SC_CLK_TCK")
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    seen: dict[int, tuple[int, bool, float]] = {}  # pid: (parent, fork server?, cpu)
    while proc.poll() is None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[3]) != proc.pid:
                    continue
                pid, cpu = int(entry.name), (int(fields[11]) + int(fields[12])) / tick
                parent, fork, was = seen.get(pid, (int(fields[1]), False, 0.0))
                # read again until it names the fork server: a process seen between its fork
                # and its exec still has its parent's command line
                fork = fork or b"forkserver" in (entry / "cmdline").read_bytes()
                seen[pid] = (parent, fork, max(cpu, was))
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.02)
    _reap()
    servers = {pid for pid, (parent, fork, _) in seen.items() if fork and parent == proc.pid}
    roles: dict[str, list[float]] = {"eval": [], "fork server": [], "agent": [], "other": []}
    for pid, (parent, _, cpu) in seen.items():
        role = "eval" if pid == proc.pid else "fork server" if pid in servers else "other"
        roles["agent" if parent in servers else role].append(cpu)
    return roles


def breakdown(framework: str, n: int, tmp: Path, extra: list[str]) -> None:
    """Where the replay's CPU beyond the floor goes: its processes, what importing the agent
    costs, what the instrumentation's spans cost per case."""
    python = VENVS / framework / "bin" / "python"
    env, cwd = child_env(framework), FIXTURES / framework
    me = [str(python), __file__, "--only", framework, "--cases", str(n), "--child"]
    _, imported = min(timed([*me, "import"], cwd, env) for _ in range(3))
    _, floor = min(timed([*me, "floor"], cwd, env) for _ in range(2))
    _, spans = min(timed([*me, "spans"], cwd, env) for _ in range(2))
    work, out = fresh_copy(tmp / f"{framework}.duckdb")
    roles = tree_cpu(replay_cmd(python, framework, work, out, *extra), cwd, env)
    problems = check_replay(out, n)
    remove_copy(work)
    if problems:
        print(f"  {framework} breakdown's replay: {problems}", flush=True)
    agents = roles["agent"]
    print(
        f"  {framework} breakdown ({n} cases): floor cpu {floor:.2f} s, of which importing the"
        f" agent {imported:.2f} s; with its instrumentation's spans {spans:.2f} s"
        f" ({(spans - floor) * 1000 / n:+.1f} ms/case)\n"
        f"    replay: eval process {sum(roles['eval']):.2f} s, fork server"
        f" {sum(roles['fork server']):.2f} s, {len(agents)} agent process(es)"
        f" {' + '.join(f'{c:.2f}' for c in sorted(agents, reverse=True))} s, other"
        f" {sum(roles['other']):.2f} s; agent processes - floor ="
        f" {sum(agents) - floor:+.2f} s ({(sum(agents) - floor) * 1000 / n:+.1f} ms/case)",
        flush=True,
    )


# ----------------------------------------------------- against vcrpy (pytest-recording)
#: what the vcrpy venv adds to the framework's packages (it brings vcrpy and pytest)
VCR_PINS = ("pytest-recording==0.14.1",)

VCR_CONFTEST = """
import json, os, sys
from pathlib import Path

HERE = Path(__file__).parent
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"  # no trace export to OpenAI (as the floor)
if os.environ.get("BENCH_RECORD"):  # recording: the fake model answers, its URL is kept
    sys.path.insert(0, {harness!r})
    import fake_openai
    from frameworks import script

    fake_openai._Handler.disable_nagle_algorithm = True
    _server, url = fake_openai.start(script({n}))
    (HERE / "url.txt").write_text(url)
else:  # replaying: the same URL (cassettes match on it), where nothing listens now
    url = (HERE / "url.txt").read_text()
os.environ["OPENAI_BASE_URL"] = url
"""

VCR_TEST = """
import pytest

import agent
from frameworks import _runner, queries

QUERIES = queries({n})
RUN = _runner({framework!r}, agent)


@pytest.mark.vcr
@pytest.mark.parametrize("i", range({n}))
def test_weather(i):
    query, city, _ = QUERIES[i]
    assert city in str(RUN(query))
"""


def vcr_python(framework: str) -> Path:
    """A venv of its own (made once, in the temporary folder) that sees the framework venv's
    packages (a ``.pth``: the pinned venv is not touched) and has pytest-recording."""
    venv = Path(tempfile.gettempdir()) / f"tracereplay-bench-vcr-{framework}"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import vcr, pytest_recording"]
    if python.exists() and not subprocess.run(check, capture_output=True).returncode:
        return python
    fw = str(VENVS / framework / "bin" / "python")
    ask = "import sys, sysconfig; print(sys.base_prefix, sysconfig.get_paths()['purelib'])"
    base, site = subprocess.check_output([fw, "-c", ask], text=True).split()
    print(f"making {venv} (the {framework} venv's packages + {' '.join(VCR_PINS)}) ...")
    subprocess.run([f"{base}/bin/python3", "-m", "venv", "--clear", str(venv)], check=True)
    own = subprocess.check_output([str(python), "-c", ask], text=True).split()[1]
    Path(own, "framework-venv.pth").write_text(f"import site; site.addsitedir({site!r})\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", *VCR_PINS], check=True)
    return python


def against_vcr(framework: str, n: int, pairs: int, tmp: Path) -> dict[str, Any]:
    """The same cases as pytest tests: HTTP cassettes replayed by vcrpy (pytest-recording,
    ``--record-mode=none``, tools run as plain functions) against ``pytest --tracereplay bench
    --tracereplay-agent ... --tracereplay-llm recorded``, both in one venv, pairs alternated
    (``bench`` recorded the store first). Printed as a line; the best wall and CPU seconds of
    each (``vcr``, ``ours``: (wall, cpu)) and the line."""
    python = vcr_python(framework)
    env = child_env(framework)
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)
    tests = tmp / f"vcr-{framework}"
    shutil.rmtree(tests, ignore_errors=True)
    tests.mkdir()
    (tests / "conftest.py").write_text(VCR_CONFTEST.format(harness=str(HARNESS), n=n))
    (tests / "test_weather.py").write_text(VCR_TEST.format(framework=framework, n=n))
    pytest = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    recording = subprocess.run([*pytest, "--record-mode=once", str(tests)], cwd=tests,
                               env={**env, "BENCH_RECORD": "1"}, capture_output=True, text=True)  # fmt: skip
    if recording.returncode:
        raise SystemExit(f"recording cassettes: {recording.stdout[-2000:]}")
    empty = tmp / f"empty-{framework}"
    empty.mkdir(exist_ok=True)
    vcr_cmd = [*pytest, "--record-mode=none", str(tests)]
    vcrs: list[tuple[float, float]] = []
    ours: list[tuple[float, float]] = []
    for p in range(pairs):
        for step in ("vcr", "ours") if p % 2 == 0 else ("ours", "vcr"):
            if step == "vcr":
                vcrs.append(timed(vcr_cmd, tests, env, ok=(0,)))
                continue
            work, _ = fresh_copy(tmp / f"{framework}.duckdb")
            cmd = [*pytest, "--tracereplay", "bench", "--tracereplay-agent", ATTRS[framework],
                   "--tracereplay-llm", "recorded", "--tracereplay-db", str(work)]  # fmt: skip
            ours.append(timed(cmd, empty, env, ok=(0,)))
            remove_copy(work)
        if pairs > 1:
            print(
                f"  {framework} pair {p + 1}: vcrpy wall {vcrs[-1][0]:.2f} s cpu"
                f" {vcrs[-1][1]:.2f} s; tracereplay wall {ours[-1][0]:.2f} s cpu"
                f" {ours[-1][1]:.2f} s",
                flush=True,
            )
    vw, rw = min(w for w, _ in vcrs), min(w for w, _ in ours)
    vc, rc = min(c for _, c in vcrs), min(c for _, c in ours)
    line = f"{framework}: pytest --tracereplay wall {rw / vw:.2f}x vcrpy, cpu {rc / vc:.2f}x vcrpy"
    print(line, flush=True)
    return {"vcr": (vw, vc), "ours": (rw, rc), "line": line}


def compiled_bytecode() -> None:
    """This checkout's tracereplay compiled, as an installed wheel is (under
    PYTHONDONTWRITEBYTECODE every process would compile it again)."""
    import compileall

    compileall.compile_dir(REPO / "tracereplay", quiet=1)
    compileall.compile_dir(HARNESS, quiet=1)
    for framework in ATTRS:
        compileall.compile_file(FIXTURES / framework / "agent.py", quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=CASES)
    ap.add_argument("--pairs", type=int, default=PAIRS)
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_CASES} cases, {QUICK_PAIRS} pair")
    ap.add_argument("--only", default=",".join(ATTRS), help="frameworks, comma-separated")
    ap.add_argument("--eval-args", default="", help="more arguments of the replay's eval")
    ap.add_argument("--breakdown", action="store_true", help="where the replay's CPU goes")
    ap.add_argument("--vcr", action="store_true", help="also pytest-recording (vcrpy) vs ours")
    ap.add_argument("--keep", help="a folder to keep the recorded stores in (for profiling)")
    ap.add_argument(
        "--child", choices=("record", "floor", "spans", "import"), help=argparse.SUPPRESS
    )
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.only, args.cases, args.db)
        return
    n, pairs = (QUICK_CASES, QUICK_PAIRS) if args.quick else (args.cases, args.pairs)
    _become_subreaper()
    compiled_bytecode()
    with tempfile.TemporaryDirectory(prefix="bench-frameworks-") as name:
        folder = Path(args.keep or name)
        folder.mkdir(parents=True, exist_ok=True)
        for framework in args.only.split(","):
            if not bench(framework, n, pairs, folder, args.eval_args.split()):
                continue
            if args.breakdown:
                breakdown(framework, n, folder, args.eval_args.split())
            if args.vcr:
                against_vcr(framework, n, pairs, folder)


if __name__ == "__main__":
    main()
