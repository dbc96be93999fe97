"""tracereplay beside its peers and baselines, every figure of issue 30's table in one run.

1. AgenticAssure's own suite file (N scenarios) and one trivial adapter, run by each tool as a
   user runs it: ``tracereplay suite import`` + ``tracereplay eval --agent adapter:Trivial
   --junit`` against ``agenticassure run FILE --adapter adapter.Trivial -o json``; CLI processes,
   pairs alternated, wall and CPU (the process and all it waited for), and the processes each
   command left running (its process group, looked up after it returned). The eval alone
   is a row of its own: replay of a fast agent, wall time against CPU time on the cores.
2. The CI path of a promoted suite (5 expected tool calls per case, its source runs stored):
   ``suite import`` (YAML, then JSON) + ``eval --junit`` against AgenticAssure ``run -o json`` on
   the same scenarios (an adapter answering each with its recorded result).
3. Replay: 200 cases of an agent that sleeps 50 ms, ``--concurrency 16``, against the ideal
   200 x 50 ms / 16 (``benchmarks/eval.py``'s ``replay_mode``), agent processes and in-process.
4. Batch ingest of 20,000 traces (200k spans) until runs are queryable against spans only
   (``benchmarks/ingest.py``'s ``in_process`` and ``spans_only``).
5. ``suite import`` of the 10,000-case suite file with 5 expected tool calls per case.
6. Replay of real framework agents (pydantic-ai, LangGraph, the OpenAI Agents SDK, CrewAI):
   ``eval --agent mod:agent --llm recorded`` of 500 recorded cases (two tools, three LLM calls
   each) against the floor, the same agent on the same queries in one process on the scripted
   fake model with plain tools (``benchmarks/frameworks.py``'s ``bench``); a row a framework.
7. The same cases as pytest tests: ``pytest --tracereplay ... --tracereplay-llm recorded``
   against vcrpy cassettes (pytest-recording; ``benchmarks/frameworks.py``'s ``against_vcr``),
   one row for the four frameworks.

AgenticAssure 0.4.0 (PyPI ``agenticassure``) is installed by this script into a venv of its own
(``benchmarks/.venvs/agenticassure-0.4.0``, reused when present; ``AGENTICASSURE_VENV`` names
another). The framework venvs are ``benchmarks/frameworks.py``'s (``$TRACEREPLAY_VENVS/<name>``,
else ``.venvs/<name>``); a framework without one has a row saying so. ``--quick`` runs the
frameworks as ``frameworks.py --quick`` does (100 cases, one pair).

    python benchmarks/peers.py [--quick] [--pairs 2] [--only import|ingest|frameworks]

A full run took 35 minutes on a 2-core machine shared with other work (load average 3-6.5),
the framework rows 32 of them; ``--quick`` (the sizes divided by 10, one pair) about 6.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import eval as eval_bench  # noqa: E402
import frameworks as frameworks_bench  # noqa: E402
import ingest as ingest_bench  # noqa: E402

from tracereplay.gcpause import gc_paused  # noqa: E402
from tracereplay.models import CheckSpec  # noqa: E402

AA_VERSION = "0.4.0"
AA_VENV = Path(
    os.environ.get("AGENTICASSURE_VENV")
    or Path(__file__).parent / ".venvs" / f"agenticassure-{AA_VERSION}"
)
BIN = Path(sys.executable).parent
TOOLS = ("get_weather", "search_flights", "book_hotel", "convert_currency", "send_email")

#: the one adapter both tools run: AgenticAssure's adapter protocol (tracereplay's ``--agent``
#: takes it as it is); a dict of the same shape where agenticassure is not installed
ADAPTER = '''
try:
    from agenticassure import AgentResult, ToolCall
except ImportError:
    AgentResult = ToolCall = dict


class Trivial:
    """Answers at once: the weather of the city named last, after one get_weather call."""

    def run(self, input, context=None):
        city = input.rsplit(" ", 1)[-1].rstrip("?")
        return AgentResult(
            output=f"It is 15 degrees in {city}.",
            tool_calls=[ToolCall(name="get_weather", arguments={"city": city}, result="15")],
        )


class Recorded5:
    """Answers each case of the promoted suite with its recorded result (5 tool calls)."""

    def run(self, input, context=None):
        i = int(input.rsplit(" ", 1)[-1].rstrip("?").removeprefix("c"))
        return AgentResult(
            output=f"It is sunny in city c{i}: {10 + i % 25} degrees, light wind.",
            tool_calls=[
                ToolCall(name=tool, arguments={"city": f"c{i}", "day": d}, result='{"ok": 1}')
                for d, tool in enumerate(TOOLS)
            ],
        )


TOOLS = __TOOLS__
'''.replace("__TOOLS__", repr(TOOLS))


def compiled_bytecode() -> None:
    """Compile tracereplay's modules to bytecode first, as installing its wheel does (and as
    AgenticAssure's were, in its venv): an editable checkout under PYTHONDONTWRITEBYTECODE has
    none, and each process then compiled its 130-odd modules again (0.5 s of CPU each)."""
    import compileall

    import tracereplay

    compileall.compile_dir(Path(tracereplay.__file__).parent, quiet=1)


# ---------------------------------------------------------------------- processes, timed
def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Wall and CPU seconds of a command (its own and its waited-for children's), and how many
    processes it started were still running once it returned: this script is their subreaper
    (an orphan becomes its child, whatever session or group it moved to), and the command's
    process group is looked up too."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a process left behind holds it
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
        proc.wait()
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        left = _left_running(proc.pid)
        for pid in left:  # what the command left behind: not to disturb the next one
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        _reap()
        if proc.returncode:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-500:]
            raise SystemExit(f"{' '.join(cmd[:4])}... exited {proc.returncode}: {tail}")
    return wall, cpu, len(left)


def _become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _left_running(pgid: int) -> list[int]:
    """Live processes (not zombies) in the process group ``pgid`` or re-parented to this one."""
    me = os.getpid()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, ppid, group = fields[0], int(fields[1]), int(fields[2])
        if state != "Z" and (group == pgid or ppid == me):
            out.append(int(entry.name))
    return out


def _reap() -> None:
    """Collect the exit of re-parented orphans (they are this process's children now)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run_agenticassure(aa_bin: Path, suite: Path, adapter: str, work: Path, n: int) -> tuple:
    """``agenticassure run SUITE --adapter ADAPTER -o json`` timed, the adapter's module found
    on PYTHONPATH (as AgenticAssure asks); every scenario must have passed."""
    for old in work.glob("results_*.json"):
        old.unlink()
    env = {**os.environ, "PYTHONPATH": str(work)}
    got = timed(
        [str(aa_bin / "agenticassure"), "run", str(suite), "--adapter", adapter, "-o", "json"],
        work,
        env,
    )
    [report] = work.glob("results_*.json")
    results = json.loads(report.read_text())["scenario_results"]
    passed = sum(1 for r in results if r["passed"])
    if (len(results), passed) != (n, n):
        raise SystemExit(f"agenticassure: {passed} of {len(results)} passed, {n} expected")
    return got


def all_passed(junit: Path, n: int) -> None:
    """The JUnit file says ``n`` tests, none failed or errored."""
    import xml.etree.ElementTree as ET

    root = ET.parse(junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    counts = tuple(int(suite.get(k, 0)) for k in ("tests", "failures", "errors"))
    if counts != (n, 0, 0):
        raise SystemExit(f"tracereplay eval: tests, failures, errors = {counts}, {n} expected")


def agenticassure_venv() -> Path:
    """The venv with agenticassure==0.4.0, made (once) when missing."""
    python = AA_VENV / "bin" / "python"
    check = [
        str(python),
        "-c",
        f"import agenticassure as a; assert a.__version__ == {AA_VERSION!r}",
    ]
    if not python.exists() or subprocess.run(check, capture_output=True).returncode:
        print(f"installing agenticassure=={AA_VERSION} into {AA_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(AA_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"agenticassure=={AA_VERSION}"], check=True
        )
    return AA_VENV / "bin"


def alternate(
    pairs: int, ours: Callable[[int], tuple[float, float, int]], theirs: Callable[[int], tuple]
) -> tuple[tuple[float, float, int], tuple[float, float, int]]:
    """Each side run ``pairs`` times, alternated (ours first, then theirs first); the best wall
    and CPU of each, and the most processes left running."""
    a: list[tuple] = []
    b: list[tuple] = []
    for i in range(pairs):
        if i % 2 == 0:
            a.append(ours(i))
            b.append(theirs(i))
        else:
            b.append(theirs(i))
            a.append(ours(i))
    return _best(a), _best(b)


def _best(results: list[tuple]) -> tuple[float, float, int]:
    return (
        min(r[0] for r in results),
        min(r[1] for r in results),
        max(r[2] for r in results),
    )


# ---------------------------------------------------------------------- 1. AgenticAssure's suite
def aa_suite_file(path: Path, n: int, scenarios: list[dict]) -> None:
    """An AgenticAssure suite file (its YAML as its loader reads it)."""
    import yaml

    path.write_text(yaml.safe_dump({"suite": {"name": path.stem}, "scenarios": scenarios[:n]}))


def trivial_scenarios(n: int) -> list[dict]:
    return [
        {
            "name": f"weather_{i}",
            "input": f"What is the weather in c{i}?",
            "expected_output": "degrees",
            "expected_tools": ["get_weather"],
            "expected_tool_args": {"get_weather": {"city": f"c{i}"}},
            "scorers": ["passfail"],
        }
        for i in range(n)
    ]


def own_suite(tmp: Path, n: int, pairs: int, aa_bin: Path) -> dict:
    work = tmp / "own"
    work.mkdir()
    (work / "adapter.py").write_text(ADAPTER)
    suite = work / "aa-suite.yaml"
    aa_suite_file(suite, n, trivial_scenarios(n))

    evals: list[tuple[float, float, int]] = []

    def ours(i: int) -> tuple[float, float, int]:
        db = work / f"t{i}.duckdb"
        a = timed([str(BIN / "tracereplay"), "--db", str(db), "suite", "import", str(suite)], work)
        b = timed(
            [str(BIN / "tracereplay"), "--db", str(db), "eval", "aa-suite", "--agent",
             "adapter:Trivial", "--junit", str(work / f"j{i}.xml")],
            work,
        )  # fmt: skip
        all_passed(work / f"j{i}.xml", n)
        evals.append(b)
        return a[0] + b[0], a[1] + b[1], a[2] + b[2]

    def theirs(i: int) -> tuple[float, float, int]:
        return run_agenticassure(aa_bin, suite, "adapter.Trivial", work, n)

    mine, peer = alternate(pairs, ours, theirs)
    # the replay alone (item 1's wall-to-CPU ratio): the eval with the lowest wall time
    return {"ours": mine, "peer": peer, "eval": min(evals)}


# ---------------------------------------------------------------------- 2. the promoted CI path
def promoted_rows(n: int) -> list[dict]:
    """Scenario rows (``benchmarks/eval.py``'s shape) with 5 tool calls each."""
    rows = eval_bench.scenario_rows(n)
    for i, r in enumerate(rows):
        r["calls"] = [
            {"tool": tool, "arguments": {"city": f"c{i}", "day": d}, "result": '{"ok": 1}'}
            for d, tool in enumerate(TOOLS)
        ]
    return rows


def promoted_files(tmp: Path, n: int) -> tuple[Path, dict[str, Path]]:
    """A store with the source runs (no suite) and the suite's files, YAML and JSON."""
    from tracereplay.promote.suite_file import dump_suite
    from tracereplay.store import Store
    from tracereplay.store.suites import get_suite, list_cases

    db = tmp / "promoted-source.duckdb"
    checks = [
        CheckSpec(kind="containsExpected"),
        CheckSpec(kind="regex", pattern=eval_bench.REGEX),
        CheckSpec(kind="toolCallArgsMatch"),
    ]
    eval_bench.build_store(db, promoted_rows(n), checks, "promoted")
    files = {}
    with Store.open(db) as store:
        suite = get_suite(store, "promoted")
        cases = list_cases(store, suite.id)
        for fmt in ("yaml", "json"):
            files[fmt] = tmp / f"promoted.{fmt}"
            files[fmt].write_text(dump_suite(suite, cases, fmt))  # type: ignore[arg-type]
        store.con.execute("DELETE FROM eval_cases")
        store.con.execute("DELETE FROM eval_suites")
    return db, files


def promoted_ci(tmp: Path, n: int, pairs: int, aa_bin: Path, db: Path, files: dict) -> dict:
    work = tmp / "promoted"
    work.mkdir()
    (work / "adapter.py").write_text(ADAPTER)
    aa_file = work / "aa-promoted.yaml"
    scenarios = [
        {
            "name": r["id"],
            "input": r["query"],
            "expected_output": r["expected"],
            "expected_tools": list(TOOLS),
            "expected_tool_args": {c["tool"]: c["arguments"] for c in r["calls"]},
            "metadata": {"regex_pattern": eval_bench.REGEX},
            "scorers": ["passfail", "regex"],
        }
        for r in promoted_rows(n)
    ]
    aa_suite_file(aa_file, n, scenarios)
    out: dict[str, tuple] = {}

    def ours_for(fmt: str) -> Callable[[int], tuple[float, float, int]]:
        def ours(i: int) -> tuple[float, float, int]:
            store = work / f"{fmt}{i}.duckdb"
            shutil.copy(db, store)
            cli = [str(BIN / "tracereplay"), "--db", str(store)]
            a = timed([*cli, "suite", "import", str(files[fmt])], work)
            b = timed([*cli, "eval", "promoted", "--junit", str(work / "j.xml")], work)
            all_passed(work / "j.xml", n)
            return a[0] + b[0], a[1] + b[1], a[2] + b[2]

        return ours

    def theirs(i: int) -> tuple[float, float, int]:
        return run_agenticassure(aa_bin, aa_file, "adapter.Recorded5", work, n)

    out["yaml"], out["peer"] = alternate(pairs, ours_for("yaml"), theirs)
    out["json"], _ = alternate(pairs, ours_for("json"), lambda i: (0.0, 0.0, 0))
    return out


# ---------------------------------------------------------------------- 5. suite import alone
def suite_import(tmp: Path, files: dict, pairs: int) -> dict:
    """``suite import`` of the YAML file (CLI process, new store), and its steps in-process."""
    cli = []
    for i in range(pairs):
        db = tmp / f"import{i}.duckdb"
        cli.append(
            timed(
                [str(BIN / "tracereplay"), "--db", str(db), "suite", "import", str(files["yaml"])],
                tmp,
            )
        )
    text = files["yaml"].read_text()
    steps = {"parse": float("inf"), "parse + validate": float("inf"), "store": float("inf")}
    with gc_paused():  # as the command does
        _import_steps(tmp, text, pairs, steps)
    return {"cli": _best(cli), "steps": steps, "mb": len(text.encode()) / 1e6}


def _import_steps(tmp: Path, text: str, pairs: int, steps: dict[str, float]) -> None:
    """The best CPU seconds of each step of ``suite import``, in-process, into ``steps``."""
    from tracereplay.promote.suite_file import load_suite
    from tracereplay.promote.suite_import import import_suite
    from tracereplay.promote.yaml_load import load
    from tracereplay.store import Store

    for i in range(pairs):
        c = time.process_time()
        load(text)
        steps["parse"] = min(steps["parse"], time.process_time() - c)
        c = time.process_time()
        parsed = load_suite(text, "yaml", "promoted.yaml")
        steps["parse + validate"] = min(steps["parse + validate"], time.process_time() - c)
        with Store.open(tmp / f"steps{i}.duckdb") as store:
            c = time.process_time()
            import_suite(store, parsed, "promoted.yaml")
            steps["store"] = min(steps["store"], time.process_time() - c)


# ---------------------------------------------------------------------- 4. ingest
def ingest(tmp: Path, traces: int) -> dict:
    path = tmp / "traces.otlp.pb"
    spans = ingest_bench.write_file(path, traces)
    total, main_cpu, worker_cpu = ingest_bench.in_process(path, tmp / "ingest-a.duckdb", traces)
    no_runs, main_bare, worker_bare = ingest_bench.spans_only(path, tmp / "ingest-b.duckdb")
    return {
        "spans": spans,
        "queryable": spans / total,
        "spans_only": spans / no_runs,
        # CPU of the whole ingest (this process and the workers) per span: the steadier ratio
        "cpu_ratio": (main_bare + worker_bare) / (main_cpu + worker_cpu),
    }


# ---------------------------------------------------------------------- the table
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 10, one pair (under 2 minutes)")
    ap.add_argument("--pairs", type=int, help="runs of each side, alternated (default 2; quick 1)")
    ap.add_argument(
        "--only",
        choices=["import", "ingest", "frameworks"],
        help="only those rows (no AgenticAssure venv): suite import (5.), batch ingest (4.) or"
        " the framework agents (6. and 7.)",
    )
    args = ap.parse_args()
    only = args.only
    scale = 10 if args.quick else 1
    pairs = args.pairs or (1 if args.quick else 2)
    n, replay_n, traces = 10_000 // scale, 200, 20_000 // scale
    os.environ.pop("TRACEREPLAY_DB", None)
    compiled_bytecode()
    if only in (None, "frameworks"):
        frameworks_bench.compiled_bytecode()
    started = time.perf_counter()
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}; {pairs} alternated pair(s), best of each"
    )
    aa_bin = agenticassure_venv() if only is None else Path()
    _become_subreaper()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if only is None:
            _peer_rows(tmp, n, pairs, aa_bin, rows)
        elif only == "import":
            _, files = promoted_files(tmp, n)
            rows.append(_import_row(tmp, n, files, pairs))
        if only is None:
            _replay_row(tmp, replay_n, rows)
        if only in (None, "ingest"):
            rows.append(_ingest_row(tmp, traces))
        if only in (None, "frameworks"):
            fw_n, fw_pairs = (
                (frameworks_bench.QUICK_CASES, frameworks_bench.QUICK_PAIRS)
                if args.quick
                else (frameworks_bench.CASES, pairs)
            )
            _framework_rows(tmp, fw_n, fw_pairs, rows)
    print("| work | tracereplay | peer or baseline | ratio |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        "receiver (spans until queryable, Phoenix and MLflow beside it): `benchmarks/receiver.py`"
        " (the peers are not installed by this script)"
    )
    print(f"# this run took {time.perf_counter() - started:.0f} s")


Row = tuple[str, str, str, str]


def _peer_rows(tmp: Path, n: int, pairs: int, aa_bin: Path, rows: list[Row]) -> None:
    """Rows 1, 2 and 5: AgenticAssure's own suite, the promoted suite's CI path, its import."""
    own = own_suite(tmp, n, pairs, aa_bin)
    (w, c, left), (pw, pc, pleft) = own["ours"], own["peer"]
    rows.append((
        f"AgenticAssure's own {n:,}-scenario suite file and one trivial adapter "
        "(`suite import` + `eval --agent` + JUnit vs `agenticassure run -o json`)",
        f"{w:.2f} s wall, {c:.2f} s CPU; {left} processes left running",
        f"{pw:.2f} s wall, {pc:.2f} s CPU; {pleft} left",
        f"**{pw / w:.2f}x** (target >= 2x)",
    ))  # fmt: skip
    ew, ec, _ = own["eval"]
    rows.append((
        "the replay alone: that suite's `eval --agent` (its agent processes' CPU included)",
        f"{ew:.2f} s wall, {ec:.2f} s CPU",
        "–",
        f"wall = CPU / {ec / ew:.2f} (target: CPU / 1.6 or less on 2 cores)",
    ))  # fmt: skip
    db, files = promoted_files(tmp, n)
    ci = promoted_ci(tmp, n, pairs, aa_bin, db, files)
    rows.append((
        f"whole CI path on a promoted suite, {n:,} cases x 5 expected tool calls "
        "(`suite import` + `eval --junit`) vs AgenticAssure `run -o json`",
        f"YAML {ci['yaml'][0]:.2f} s wall, {ci['yaml'][1]:.2f} s CPU; "
        f"JSON {ci['json'][0]:.2f} s, {ci['json'][1]:.2f} s CPU",
        f"{ci['peer'][0]:.2f} s wall, {ci['peer'][1]:.2f} s CPU",
        f"**{ci['peer'][0] / ci['yaml'][0]:.2f}x** (JSON {ci['peer'][0] / ci['json'][0]:.2f}x)",
    ))  # fmt: skip
    rows.append(_import_row(tmp, n, files, pairs))


def _import_row(tmp: Path, n: int, files: dict, pairs: int) -> Row:
    imported = suite_import(tmp, files, pairs)
    s = imported["steps"]
    return (
        f"`suite import` of that {n:,}-case suite file ({imported['mb']:.1f} MB YAML)",
        f"{imported['cli'][0]:.2f} s wall, {imported['cli'][1]:.2f} s CPU (CLI process); "
        f"in-process CPU: parse {s['parse']:.2f}, validate "
        f"{s['parse + validate'] - s['parse']:.2f}, store {s['store']:.2f}",
        "–",
        "target < 1 s",
    )


def _replay_row(tmp: Path, replay_n: int, rows: list[Row]) -> None:
    ideal = replay_n * 0.05 / 16
    walls = {p: eval_bench.replay_mode(tmp, replay_n, 16, p) for p in (False, True)}
    rows.append((
        f"replay, {replay_n} cases of a 50 ms agent, concurrency 16",
        f"agent processes {walls[False]:.2f} s = {walls[False] / ideal:.2f}x ideal; "
        f"`--in-process` {walls[True]:.2f} s = {walls[True] / ideal:.2f}x",
        f"ideal {ideal:.3f} s",
        "target 1.5x",
    ))  # fmt: skip


def _ingest_row(tmp: Path, traces: int) -> Row:
    got = ingest(tmp, traces)
    return (
        f"batch ingest {got['spans']:,} spans, runs queryable vs spans only",
        f"{got['queryable']:,.0f} spans/s",
        f"spans only {got['spans_only']:,.0f} spans/s",
        f"{got['queryable'] / got['spans_only']:.2f}x the spans-only rate, by CPU"
        f" {got['cpu_ratio']:.2f}x (no target: its measured limit in CPython with the public"
        " tables as they are is 0.42-0.51x, below)",
    )


#: the frameworks of rows 6 and 7, as ``benchmarks/frameworks.py`` and the README name them
FRAMEWORKS = {
    "pydantic_ai": "pydantic-ai",
    "langgraph": "LangGraph",
    "openai_agents": "OpenAI Agents SDK",
    "crewai": "CrewAI",
}


def _framework_rows(tmp: Path, n: int, pairs: int, rows: list[Row]) -> None:
    """Rows 6 (one a framework, against the floor) and 7 (the four against vcrpy). Their
    progress goes to stderr; a framework whose venv is missing, or whose run failed, says so
    in its row."""
    folder = tmp / "frameworks"
    folder.mkdir()
    vcr: dict[str, dict | str] = {}
    for framework, name in FRAMEWORKS.items():
        work = (
            f"{name}: `eval --agent {frameworks_bench.ATTRS[framework]} --llm recorded` of"
            f" {n:,} recorded cases (two tools, three LLM calls each) vs the floor (the same"
            " agent on the same queries in one process, scripted fake model, plain tools)"
        )
        target = "(targets: wall <= 1.2x, CPU per case <= 1.3x)"
        got = _quietly(frameworks_bench.bench, framework, n, pairs, folder, [])
        if got is None:
            missing = f"not run: no venv at {frameworks_bench.VENVS / framework}"
            vcr[framework] = missing
            rows.append((work, missing, "–", target))
            continue
        if isinstance(got, str):
            vcr[framework] = got
            rows.append((work, got, "–", target))
            continue
        vcr[framework] = _quietly(frameworks_bench.against_vcr, framework, n, pairs, folder)
        (fw, fc), (rw, rc) = got["floor"], got["replay"]
        wrong = f"; replay problems: {'; '.join(got['problems'])}" if got["problems"] else ""
        rows.append((
            work,
            f"{rw:.2f} s wall, {rc:.2f} s CPU ({rc * 1000 / n:.1f} ms/case){wrong}",
            f"floor {fw:.2f} s wall, {fc:.2f} s CPU ({fc * 1000 / n:.1f} ms/case)",
            f"**wall {rw / fw:.2f}x, CPU {rc / fc:.2f}x** {target}",
        ))  # fmt: skip
    rows.append(_vcr_row(n, vcr))


def _quietly(step: Callable[..., Any], framework: str, *args: Any) -> Any:
    """What ``step(framework, *args)`` returns, its printing sent to stderr; if it failed, why,
    as a string."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return step(framework, *args)
    except (Exception, SystemExit) as e:  # the other frameworks still run
        why = " ".join(str(e).split())[:300]
        print(f"{framework}: failed: {why}", file=sys.stderr, flush=True)
        return f"failed: {why}"


def _vcr_row(n: int, vcr: dict[str, dict | str]) -> Row:
    ours, theirs, ratios = [], [], []
    for framework, name in FRAMEWORKS.items():
        got = vcr.get(framework, "not run")
        if isinstance(got, str):
            ours.append(f"{name}: {got}")
            continue
        (vw, vc), (rw, rc) = got["vcr"], got["ours"]
        ours.append(f"{name} {rw:.2f} s wall, {rc:.2f} s CPU")
        theirs.append(f"{name} {vw:.2f} s wall, {vc:.2f} s CPU")
        ratios.append(f"{name} wall {rw / vw:.2f}x, CPU {rc / vc:.2f}x")
    return (
        f"the same {n:,} cases as pytest tests, each framework: `pytest --tracereplay bench"
        " --tracereplay-llm recorded` vs vcrpy cassettes (pytest-recording,"
        " `--record-mode=none`)",
        "; ".join(ours),
        "vcrpy: " + "; ".join(theirs) if theirs else "–",
        f"{'; '.join(ratios)} (target: tracereplay at least as fast, <= 1.00x)".lstrip(),
    )


if __name__ == "__main__":
    main()
