"""When ``tracereplay eval --agent`` returns, every process it started has exited: its agent
processes, the fork server they come from and multiprocessing's resource tracker, whether the
eval ended by itself, by Ctrl-C (SIGINT to the terminal's process group) or by ``kill``
(SIGTERM to the command alone).

The command runs in a session of its own (``start_new_session``): every process it starts,
directly or through the fork server, is in that session, which ``/proc`` tells."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from replay_fixtures import AGENTS, rows

pytestmark = pytest.mark.slow


def in_session(sid: int) -> list[tuple[int, str]]:
    """The processes (pid, command line) of session ``sid`` that have not exited (zombies
    have: only their exit status is left)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if int(stat[3]) == sid and stat[0] != "Z":
            found.append((int(entry), cmdline.decode(errors="replace").strip()))
    return found


def start_eval(
    db: Path, agent: str, env: dict[str, str], *, suite: str = "weather", more: tuple = ()
) -> subprocess.Popen[bytes]:
    # stderr to a file, not a pipe: reading a pipe to its end would wait for every process
    # holding it, the very ones that must not be left
    err = (db.parent / "stderr").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", suite,
         "--agent", agent, "--concurrency", "2", "--timeout", "60", *more],
        cwd=AGENTS, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
    )  # fmt: skip


def wait_for_agents(pids_file: Path, count: int, proc: subprocess.Popen[bytes]) -> None:
    """Until ``count`` agent processes are in a case (each writes its pid there)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if pids_file.exists() and len(pids_file.read_text().split()) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"the agents did not start: {stderr_of(proc)}")


def stderr_of(proc: subprocess.Popen[bytes]) -> str:
    db = Path(proc.args[proc.args.index("--db") + 1])  # type: ignore[union-attr, index]
    return (db.parent / "stderr").read_text(errors="replace")


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, list[tuple[int, str]]]:
    """Wait for the command; its exit code, its stderr and what of its session still runs at
    the moment it returned."""
    try:
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = in_session(proc.pid)
    for pid, _ in left:  # leave nothing behind for the next test, whatever happened
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.returncode, stderr_of(proc), left


def test_a_finished_eval_leaves_no_process_running(db: Path) -> None:
    proc = start_eval(db, "replay_agents:weather", dict(os.environ))
    code, err, left = finish(proc)
    assert code == 0, err
    assert left == [], left


@pytest.mark.parametrize(
    ("suite", "more", "exit_code", "message"),
    [
        ("no-such-suite", (), 2, "error: no suite named"),
        ("weather", ("--tool-match", "nearest"), 2, "error: Invalid value for '--tool-match'"),
        ("weather", ("--llm-until", "2"), 2, "error: --llm-until applies to --llm recorded"),
    ],
)
def test_an_eval_refused_leaves_no_process_running(
    db: Path, suite: str, more: tuple, exit_code: int, message: str
) -> None:
    # the command starts the agents' fork server before it reads its command line: a command
    # it then refuses ends the server with it
    proc = start_eval(db, "replay_agents:weather", dict(os.environ), suite=suite, more=more)
    code, err, left = finish(proc)
    assert left == [], left
    assert (code, err.splitlines()[-1][: len(message)]) == (exit_code, message), err


@pytest.mark.parametrize(
    "how",
    [
        # a terminal's Ctrl-C goes to the whole foreground process group
        pytest.param(lambda proc: os.killpg(proc.pid, signal.SIGINT), id="ctrl-c"),
        # kill PID: the command alone
        pytest.param(lambda proc: proc.send_signal(signal.SIGTERM), id="sigterm"),
    ],
)
def test_an_interrupted_eval_leaves_no_process_running(db: Path, tmp_path: Path, how) -> None:
    pids_file = tmp_path / "agent-pids"
    env = {**os.environ, "REPLAY_AGENT_PIDS": str(pids_file)}
    proc = start_eval(db, "replay_agents:hang", env)
    wait_for_agents(pids_file, 2, proc)
    how(proc)
    code, err, left = finish(proc)
    assert left == [], left
    assert code == 130, err
    assert "Traceback" not in err
    [run] = rows(db, "SELECT status FROM eval_runs")
    assert run["status"] == "interrupted"


SPY = """
import os, sys
from replay_agents import weather


def agent(query):
    cli = sorted(m for m in sys.modules if m.startswith("tracereplay.cli"))
    with open(os.environ["SEEN_FILE"], "a") as f:
        f.write(f"{os.getpid()} {' '.join(cli) or '-'}\\n")
    return weather(query)
"""


def test_agent_processes_of_the_console_script_do_not_run_the_cli_again(
    db: Path, tmp_path: Path
) -> None:
    # multiprocessing runs a program's main script again in each worker (and the fork server):
    # for the ``tracereplay`` command, every CLI import, in every agent process
    (tmp_path / "spy_agent.py").write_text(SPY)
    seen = tmp_path / "seen"
    env = {
        **os.environ,
        "SEEN_FILE": str(seen),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(AGENTS)]),
    }
    command = Path(sys.executable).with_name("tracereplay")  # the console script itself
    proc = subprocess.run(
        [str(command), "--db", str(db), "eval", "weather", "--agent", "spy_agent:agent"],
        cwd=AGENTS, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = seen.read_text().split("\n")[:-1]
    assert len(lines) == 3  # one per case
    assert all(line.split(" ", 1)[1] == "-" for line in lines), lines
