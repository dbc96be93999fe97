"""Replay overhead: what ``tracereplay eval --agent`` costs beyond the agent, as CLI processes.

(a) A fast agent (an AgenticAssure adapter that answers at once), ``--cases`` cases (2,000):
    ``tracereplay eval --agent`` timed from its start to its exit, against the CPU time of its
    whole process tree (the eval, its agent processes, the fork server; taken as their parent
    with PR_SET_CHILD_SUBREAPER). Wall time at most CPU time / 1.6 on 2 cores means the eval
    keeps both busy instead of waiting (target); the line also says whether any process of the
    command's session still ran when it returned (target: none).
(b) The whole path with AgenticAssure's own suite file and adapter, ``--suite-cases`` scenarios
    (10,000): ``tracereplay suite import FILE`` + ``tracereplay eval --agent --junit`` against
    ``agenticassure run FILE --adapter ... -o json`` (AgenticAssure 0.4.0 in a venv of its own),
    pairs alternated, the best of ``--repeat``. Target: tracereplay >= 2x.

The 200 cases x 50 ms at --concurrency 16 against the ideal time is ``benchmarks/eval.py`` (b).

    python benchmarks/replay.py [--cases 2000] [--suite-cases 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AA_VERSION = "0.4.0"
AA_VENV = Path(
    os.environ.get("AGENTICASSURE_VENV")
    or Path(tempfile.gettempdir()) / f"tracereplay-bench-agenticassure-{AA_VERSION}"
)

ADAPTER = """
from agenticassure import AgentResult, ToolCall


class Agent:
    def run(self, input, context=None):
        city = input.rsplit(" ", 1)[-1].rstrip("?")
        return AgentResult(
            output=f"It is 20 degrees in {city}.",
            tool_calls=[ToolCall(name="get_weather", arguments={"city": city})],
        )
"""


def suite_file(n: int) -> str:
    """An AgenticAssure suite of ``n`` scenarios (passfail + regex, one expected tool call)."""
    lines = ["suite:", "  name: bench", "scenarios:"]
    for i in range(n):
        lines += [
            f"  - name: s{i}",
            f"    input: What is the weather in c{i}?",
            "    expected_output: degrees",
            "    expected_tools: [get_weather]",
            f"    expected_tool_args: {{get_weather: {{city: c{i}}}}}",
            "    metadata: {regex_pattern: '\\d+ degrees'}",
            "    scorers: [passfail, regex]",
        ]
    return "\n".join(lines) + "\n"


def _subreaper() -> bool:
    """Become the parent of every orphan of this process's children (Linux), so their CPU
    time lands in ours when they are reaped."""
    try:
        return ctypes.CDLL(None).prctl(36, 1) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _session(sid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[3]) == sid and stat[0] != "Z":
                found.append(int(entry))
    return found


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, list[int]]:
    """Wall seconds of ``cmd``, CPU seconds of its process tree, and the processes of its
    session still running when it returned."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    proc.wait()
    wall = time.perf_counter() - t0
    left = _session(proc.pid) if Path("/proc").is_dir() else []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # reap what was left (its CPU time counts too)
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.02)
    after = os.times()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])}...: exit {proc.returncode}: {proc.stderr.read()}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, left


def agenticassure_cli() -> Path:
    """AgenticAssure's CLI in its own venv (installed on first use)."""
    python = AA_VENV / "bin" / "python"
    check = [str(python), "-c", "import agenticassure"]
    if not python.exists() or subprocess.run(check, capture_output=True).returncode:
        print(f"installing agenticassure=={AA_VERSION} into {AA_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(AA_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"agenticassure=={AA_VERSION}"],
            check=True,
        )
    return AA_VENV / "bin" / "agenticassure"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--suite-cases", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4, help="eval's default")
    args = ap.parse_args()
    tracereplay = str(Path(sys.executable).with_name("tracereplay"))
    from peers import compiled_bytecode  # this script's folder is on sys.path

    compiled_bytecode()  # as an installed wheel has it
    reaping = _subreaper()
    aa_cli = agenticassure_cli()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "bench_adapter.py").write_text(ADAPTER)
        env = {k: v for k, v in os.environ.items() if k != "TRACEREPLAY_DB"}
        # the adapter imports agenticassure: tracereplay's eval finds it in AgenticAssure's
        # venv when its own environment lacks it (the adapter is the user's code, not ours)
        aa_site = next((AA_VENV / "lib").glob("python*/site-packages"))
        env["PYTHONPATH"] = os.pathsep.join([str(tmp), str(aa_site)])
        ev = ["eval", "bench", "--agent", "bench_adapter:Agent"]
        ev += ["--concurrency", str(args.concurrency)]

        n = args.cases
        (tmp / "small.yaml").write_text(suite_file(n))
        small = tmp / "small.duckdb"
        timed([tracereplay, "--db", str(small), "suite", "import", str(tmp / "small.yaml")],
              tmp, env)  # fmt: skip
        print(f"(a) eval --agent, a fast AgenticAssure adapter, {n:,} cases, CLI processes")
        for _ in range(args.repeat):
            work = tmp / "a.duckdb"
            shutil.copy(small, work)
            wall, cpu, left = timed([tracereplay, "--db", str(work), *ev], tmp, env)
            tree = f"CPU {cpu:.2f} s" if reaping else "CPU of its tree unknown"
            print(
                f"  wall {wall:.2f} s, {tree}: wall = CPU / {cpu / wall:.2f} (target >= 1.6 on"
                f" 2 cores); {n / wall:,.0f} cases/s; processes left running: {len(left)}"
            )
            for p in (work.with_name(work.name + ".spool"),):
                shutil.rmtree(p, ignore_errors=True)

        m = args.suite_cases
        big = tmp / "suite.yaml"
        big.write_text(suite_file(m))
        print(f"(b) the whole path, AgenticAssure's suite file and adapter, {m:,} scenarios")
        ours: list[tuple[float, float, float]] = []
        theirs: list[tuple[float, float]] = []
        for r in range(args.repeat):
            work = tmp / f"b{r}.duckdb"
            w1, c1, _ = timed([tracereplay, "--db", str(work), "suite", "import", str(big)],
                              tmp, env)  # fmt: skip
            junit = ["--junit", str(tmp / "junit.xml")]
            w2, c2, _ = timed([tracereplay, "--db", str(work), *ev, *junit], tmp, env)
            ours.append((w1 + w2, w1, w2))
            out = tmp / "aa.json"
            cmd = [str(aa_cli), "run", str(big), "--adapter", "bench_adapter.Agent", "-o", "json"]
            wa, ca, _ = timed(cmd, tmp, {**env, "PYTHONPATH": str(tmp)})
            theirs.append((wa, ca))
            out.unlink(missing_ok=True)
            print(
                f"  run {r + 1}: tracereplay {w1 + w2:.2f} s (suite import {w1:.2f}, eval --agent"
                f" --junit {w2:.2f}; CPU {c1 + c2:.2f} s), agenticassure run {wa:.2f} s (CPU"
                f" {ca:.2f} s)"
            )
        best, aa = min(ours), min(theirs)
        print(
            f"  best: tracereplay {best[0]:.2f} s, agenticassure {aa[0]:.2f} s: ratio"
            f" {aa[0] / best[0]:.2f}x (target >= 2x)"
        )


if __name__ == "__main__":
    main()
