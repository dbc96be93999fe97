"""Evaluation throughput.

(a) Recorded mode: 10,000 cases scored with containsExpected, regex and toolCallArgsMatch against
    their source runs, results persisted (eval_runs, case_results, check_results), timed from
    loading the suite to the last result stored. In the same run, AgenticAssure 0.4.0 (PyPI
    ``agenticassure``, installed by this script into a throwaway venv) scores the same 10,000
    scenarios in-process with passfail, exact and regex (its Runner, an adapter returning each
    scenario's recorded result; scenario objects built before the clock starts).
    Then the whole path a CI job runs, side by side with AgenticAssure's: the 10,000-case suite
    file (YAML, then JSON) -> ``tracereplay suite import`` -> ``tracereplay eval --junit``, each a
    CLI process timed from its start (store with the source runs already there), against
    AgenticAssure's suite file -> scenarios -> run -> JSON report (what ``run -o json`` does,
    timed in-process: its CLI would add its own start-up). Target: >= 3x.
(b) Replay: 200 cases against an agent that sleeps 50 ms per call, --concurrency 16; the wall
    time against the ideal 200 x 50 ms / 16 = 0.625 s, in agent processes (the default: 16
    processes started, each importing the agent, inside the timed run) and ``--in-process``.

    python benchmarks/eval.py [--cases 10000] [--replay-cases 200] [--skip-agenticassure]

(``AGENTICASSURE_VENV=/tmp/aa`` uses a venv that already has agenticassure==0.4.0.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tracereplay.checks import list_check_kinds
from tracereplay.evaluate.evaluation import EvalSettings, run_evaluation
from tracereplay.evaluate.recorded.columnar import ScoredCases, load_recorded_cases
from tracereplay.gcpause import gc_paused
from tracereplay.models import (
    AgentResult,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    Run,
    ToolCallRecord,
)
from tracereplay.scoring.runner import RunnerOptions
from tracereplay.store import Store
from tracereplay.store.open import open_store
from tracereplay.store.suites import get_suite, insert_cases, insert_suite

AA_VERSION = "0.4.0"
AA_VENV = Path(
    os.environ.get("AGENTICASSURE_VENV")
    or Path(tempfile.gettempdir()) / f"tracereplay-bench-agenticassure-{AA_VERSION}"
)
REGEX = r"\d+ degrees"

AA_SCRIPT = r"""
import json, sys, time
import yaml
from agenticassure import AgentResult, ToolCall
from agenticassure.loader import load_scenarios
from agenticassure.reports.json_report import JSONReporter
from agenticassure.runner import Runner

rows = json.load(open(sys.argv[1]))
pattern, suite_file, report_file = sys.argv[2], sys.argv[3], sys.argv[4]
yaml.safe_dump(
    {
        "suite": {"name": "bench"},
        "scenarios": [
            {
                "name": r["id"], "input": r["query"], "expected_output": r["expected"],
                "expected_tools": [r["tool"]], "expected_tool_args": {r["tool"]: r["arguments"]},
                "metadata": {"regex_pattern": pattern}, "scorers": ["passfail", "exact", "regex"],
            }
            for r in rows
        ],
    },
    open(suite_file, "w"),
)
results = {
    r["query"]: AgentResult(
        output=r["response"],
        tool_calls=[ToolCall(name=r["tool"], arguments=r["arguments"], result=r["result"])],
    )
    for r in rows
}

class Recorded:
    def run(self, input, context=None):
        return results[input]

# end to end, as its CLI works: the suite file -> scenarios -> run -> JSON report
t0 = time.perf_counter()
suite = load_scenarios(suite_file)
t1 = time.perf_counter()
out = Runner(Recorded()).run_suite(suite)  # the run alone: scenario objects already built
t2 = time.perf_counter()
JSONReporter().report(out, report_file)
t3 = time.perf_counter()
passed = sum(1 for r in out.scenario_results if r.passed)
print(json.dumps({"run": t2 - t1, "end_to_end": t3 - t0, "load": t1 - t0, "report": t3 - t2,
                  "passed": passed, "total": len(out.scenario_results)}))
"""

BENCH_AGENT = """
import time

import tracereplay


@tracereplay.tool
def lookup(city: str) -> str:
    raise RuntimeError("a live tool call: replay should have answered it")


def run(query: str) -> str:
    time.sleep(0.05)
    city = query.rsplit(" ", 1)[-1].rstrip("?")
    return f"{lookup(city)} in {city}"
"""


def scenario_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        response = f"It is sunny in city c{i}: {10 + i % 25} degrees, light wind."
        rows.append(
            {
                "id": f"s{i}",
                "query": f"What is the weather in c{i}?",
                "response": response,
                "expected": response,
                "tool": "get_weather",
                "arguments": {"city": f"c{i}", "unit": "celsius"},
                "result": '{"temp": 20}',
            }
        )
    return rows


def build_store(db: Path, rows: list[dict], checks: list[CheckSpec], suite_name: str) -> None:
    """Source runs (written columnar, as ingestion does) and a suite with a case per run; a row
    with ``calls`` (a list of ``{"tool", "arguments", "result"}``) has those tool calls, each
    expected by its case, else the one of ``tool``/``arguments``/``result``."""
    runs: list[Run] = []
    cases: list[EvalCase] = []
    suite = EvalSuite(name=suite_name, agent_name="bench", checks=checks)
    for i, r in enumerate(rows):
        calls = r.get("calls") or [r]
        trace = uuid.uuid4().hex
        run = Run(
            run_id=str(uuid.uuid4()),
            trace_id=trace,
            root_span_id=trace[:16],
            agent_name="bench",
            query=r["query"],
            duration_ms=120.0,
            result=AgentResult(
                response=r["response"],
                tool_calls=[
                    ToolCallRecord(
                        round=1, tool_name=c["tool"], arguments=c["arguments"], result=c["result"]
                    )
                    for c in calls
                ],
                total_rounds=2,
                total_llm_calls=2,
            ),
        )
        runs.append(run)
        cases.append(
            EvalCase(
                suite_id=suite.id,
                seq=i,
                query=r["query"],
                expected_output=r["expected"],
                expected_tool_calls=[
                    EvalExpectedToolCall(name=c["tool"], arguments=c["arguments"]) for c in calls
                ],
                source_kind="reference_run",
                source_run_id=run.run_id,
            )
        )
    with Store.open(db) as store, store.transaction():
        store.replace_runs([r.trace_id for r in runs], runs)
        insert_suite(store, suite)
        insert_cases(store, cases)


def recorded_mode(tmp: Path, n: int) -> tuple[float, dict]:
    db = tmp / "recorded.duckdb"
    checks = [
        CheckSpec(kind="containsExpected"),
        CheckSpec(kind="regex", pattern=REGEX),
        CheckSpec(kind="toolCallArgsMatch"),
    ]
    build_store(db, scenario_rows(n), checks, "bench")
    settings = EvalSettings(suite="bench", db=db)  # the CLI's defaults
    list_check_kinds()  # import the built-in checks before the clock (AgenticAssure's too)
    t = time.perf_counter()
    outcome = run_evaluation(settings)
    elapsed = time.perf_counter() - t
    with Store.open(db) as store:
        stored = store.count("case_results"), store.count("check_results")
    assert stored == (n, 3 * n), stored
    assert outcome.record.passed == n, outcome.record
    return elapsed, {
        "passed": outcome.record.passed,
        "floor": storage_floor(tmp, db),
        "python": python_side(db, "bench"),
    }


def python_side(db: Path, suite_name: str, repeats: int = 3) -> dict[str, float]:
    """The least time (best of ``repeats``) of each in-process step of a recorded eval, with
    nothing written: loading the cases (one join), scoring them (the columnar checks, the work
    comparable to AgenticAssure's run) and laying the results out as Arrow rows."""
    best = {"load": float("inf"), "score": float("inf"), "rows": float("inf")}
    with Store.open(db) as store:
        suite = get_suite(store, suite_name)
        for _ in range(repeats):
            with gc_paused():
                t0 = time.perf_counter()
                cases = load_recorded_cases(store, suite.id)
                t1 = time.perf_counter()
                scored = ScoredCases(store, cases, 0, len(cases), suite.checks)
                t2 = time.perf_counter()
                scored.case_table("bench", suite.id)
                scored.check_table("bench")
                t3 = time.perf_counter()
            for key, value in (("load", t1 - t0), ("score", t2 - t1), ("rows", t3 - t2)):
                best[key] = min(best[key], value)
    return best


def storage_floor(tmp: Path, db: Path, repeats: int = 3) -> float:
    """The least time DuckDB alone takes to persist the rows that eval stored: open a store,
    insert the same case_results and check_results rows (Arrow, one INSERT each), commit,
    close; no loading and no scoring. Best of ``repeats``, each into a fresh store."""
    with Store.open(db) as store:
        rows = {
            t: store.con.sql(f"SELECT * FROM {t}").to_arrow_table()
            for t in ("case_results", "check_results")
        }
    best = float("inf")
    for i in range(repeats):
        path = tmp / f"floor{i}.duckdb"
        with Store.open(path):  # the schema, made before the clock (eval finds it made too)
            pass
        t = time.perf_counter()
        # the settings and the inserts eval uses
        with (
            Store.open(path) as store,
            store.settings(checkpoint_threshold="0KB", threads=1),
            store.transaction(),
        ):
            for table, data in rows.items():
                store.append_table(table, data)
        best = min(best, time.perf_counter() - t)
    return best


def agenticassure(tmp: Path, n: int) -> dict:
    python = AA_VENV / "bin" / "python"
    if (
        not python.exists()
        or subprocess.run(
            [str(python), "-c", "import agenticassure"], capture_output=True
        ).returncode
    ):
        print(f"installing agenticassure=={AA_VERSION} into {AA_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(AA_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"agenticassure=={AA_VERSION}"],
            check=True,
        )
    data = tmp / "scenarios.json"
    data.write_text(json.dumps(scenario_rows(n)))
    script = tmp / "aa_bench.py"
    script.write_text(AA_SCRIPT)
    out = subprocess.run(
        [str(python), str(script), str(data), REGEX, str(tmp / "aa.yaml"), str(tmp / "aa.json")],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ci_path(tmp: Path, n: int) -> dict[str, dict[str, float]]:
    """Seconds of ``suite import FILE`` and ``eval --junit`` (CLI processes) per file format."""
    import shutil

    from tracereplay.promote.suite_file import dump_suite
    from tracereplay.store.suites import list_cases

    db = tmp / "ci-source.duckdb"
    checks = [
        CheckSpec(kind="containsExpected"),
        CheckSpec(kind="regex", pattern=REGEX),
        CheckSpec(kind="toolCallArgsMatch"),
    ]
    build_store(db, scenario_rows(n), checks, "bench")
    files = {}
    with Store.open(db) as store:
        suite = get_suite(store, "bench")
        cases = list_cases(store, suite.id)
        for fmt in ("yaml", "json"):
            files[fmt] = tmp / f"bench-suite.{fmt}"
            files[fmt].write_text(dump_suite(suite, cases, fmt))  # type: ignore[arg-type]
        store.con.execute("DELETE FROM eval_cases")
        store.con.execute("DELETE FROM eval_suites")
    cli = [str(Path(sys.executable).with_name("tracereplay"))]
    out: dict[str, dict[str, float]] = {}
    for fmt, path in files.items():
        work = tmp / f"ci-{fmt}.duckdb"
        shutil.copy(db, work)
        t0 = time.perf_counter()
        subprocess.run([*cli, "--db", str(work), "suite", "import", str(path)], check=True,
                       capture_output=True)  # fmt: skip
        t1 = time.perf_counter()
        subprocess.run([*cli, "--db", str(work), "eval", "bench", "--junit", str(tmp / "j.xml")],
                       check=True, capture_output=True)  # fmt: skip
        t2 = time.perf_counter()
        out[fmt] = {"import": t1 - t0, "eval": t2 - t1, "total": t2 - t0}
    return out


def replay_mode(tmp: Path, n: int, concurrency: int, in_process: bool = False) -> float:
    db = tmp / f"replay-{in_process}.duckdb"
    rows = [
        {
            "id": f"r{i}",
            "query": f"What is the weather in c{i}?",
            "response": f"sunny in c{i}",
            "expected": f"sunny in c{i}",
            "tool": "lookup",
            "arguments": {"city": f"c{i}"},
            "result": "sunny",
        }
        for i in range(n)
    ]
    checks = [CheckSpec(kind="containsExpected"), CheckSpec(kind="toolCallArgsMatch")]
    build_store(db, rows, checks, "replay-bench")
    agent_dir = tmp / "agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "bench_agent.py").write_text(BENCH_AGENT)
    sys.path.insert(0, str(agent_dir))
    settings = EvalSettings(
        suite="replay-bench",
        db=db,
        agent="bench_agent:run",
        runner=RunnerOptions(concurrency=concurrency),
        in_process=in_process,
    )
    run_evaluation(settings)  # warm-up: imports, SDK set-up (not timed)
    with open_store(db):  # ingest the warm-up's replay runs now, not in the timed run
        pass
    t = time.perf_counter()
    outcome = run_evaluation(settings)
    elapsed = time.perf_counter() - t
    assert outcome.record.passed == n, [r.result.reason for r in outcome.reports[:3]]
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--replay-cases", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16, help="for the replay benchmark")
    ap.add_argument("--skip-agenticassure", action="store_true")
    args = ap.parse_args()
    os.environ.pop("TRACEREPLAY_DB", None)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        n = args.cases
        print(f"(a) recorded mode, {n:,} cases, containsExpected + regex + toolCallArgsMatch")
        elapsed, info = recorded_mode(tmp, n)
        ours = n / elapsed
        floor, steps = info["floor"], info["python"]
        scoring = steps["score"]
        python = sum(steps.values())
        print(f"  tracereplay eval, results stored:     {ours:>9,.0f} cases/s  ({elapsed:.3f} s)")
        print(
            f"  DuckDB alone storing the same rows:   {n / floor:>9,.0f} cases/s  ({floor:.3f} s:"
            " open, insert, commit, close; no loading, no scoring)"
        )
        print(
            f"  scoring alone, in memory, no store:   {n / scoring:>9,.0f} cases/s  ({scoring:.3f} s)"
        )
        print(
            f"  the Python side alone: {python:.3f} s (loading {steps['load']:.3f}, scoring"
            f" {scoring:.3f}, result rows {steps['rows']:.3f}; one thread: they need the GIL)"
        )
        if not args.skip_agenticassure:
            aa = agenticassure(tmp, n)
            best = ours
            run_rate = aa["total"] / aa["run"]
            e2e_rate = aa["total"] / aa["end_to_end"]
            print(
                f"  AgenticAssure {AA_VERSION}, passfail + exact + regex ({aa['passed']} passed):"
            )
            print(
                f"    Runner.run_suite on scenarios built in memory: {run_rate:>9,.0f} scenarios/s"
                f"  ({aa['run']:.2f} s)  ratio {best / run_rate:.2f}x"
            )
            print(
                f"    suite file -> run -> JSON report (end to end): {e2e_rate:>9,.0f} scenarios/s"
                f"  ({aa['end_to_end']:.2f} s: load {aa['load']:.2f}, report {aa['report']:.2f})"
                f"  ratio {best / e2e_rate:.2f}x"
            )
            print(
                f"    tracereplay scoring alone (in memory), against run_suite: "
                f"{n / scoring / run_rate:.2f}x"
            )
            print(
                f"    DuckDB alone storing the results, against run_suite: "
                f"{n / floor / run_rate:.2f}x (the ceiling for persisted results, scoring free)"
            )
            print(
                f"    3x its run leaves {aa['run'] / 3:.3f} s for 10,000 cases: the Python side"
                f" alone takes {python / (aa['run'] / 3):.0%} of it, DuckDB storing alone"
                f" {floor / (aa['run'] / 3):.0%}"
            )
            print("  target: tracereplay >= 3x AgenticAssure")
            print(f"  the CI path, {n:,} cases: suite file -> suite import -> eval --junit")
            print(
                f"    AgenticAssure {AA_VERSION}: suite file -> run -> JSON report"
                f"  {aa['end_to_end']:.2f} s"
            )
            for fmt, t in ci_path(tmp, n).items():
                print(
                    f"    tracereplay, {fmt:<4} suite file: {t['total']:.2f} s (suite import"
                    f" {t['import']:.2f}, eval --junit {t['eval']:.2f}; CLI processes)  ratio"
                    f" {aa['end_to_end'] / t['total']:.2f}x (target >= 3x)"
                )
        m = args.replay_cases
        ideal = m * 0.05 / args.concurrency
        print(
            f"(b) replay, {m} cases, agent sleeping 50 ms per call, --concurrency {args.concurrency}"
        )
        for in_process in (False, True):
            wall = replay_mode(tmp, m, args.concurrency, in_process)
            how = "--in-process     " if in_process else "agent processes  "
            print(
                f"  {how} wall time {wall:.3f} s, ideal {ideal:.3f} s: {wall / ideal:.2f}x ideal "
                "(target <= 1.5x)"
            )


if __name__ == "__main__":
    main()
