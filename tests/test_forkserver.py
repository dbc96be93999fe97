"""Worker processes (forked by the fork server, so not children of the process that asked for
them) leave when that process is killed: nothing is left running after a kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PARENT = r"""
import os, sys, time
from tracereplay.forkserver import started_child, worker_context

def child(parent: int, pid_file: str) -> None:
    started_child(parent)
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)

if __name__ == "__main__":
    ctx = worker_context()
    p = ctx.Process(target=child, args=(os.getpid(), sys.argv[1]), daemon=False)
    p.start()
    time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_worker_leaves_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, str(script), str(pid_file)])
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(pid_file.read_text())
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(child), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


MAIN_RUNS = r"""
import os, sys
with open(sys.argv[1] if __name__ == "__main__" else os.environ["MAIN_RUNS_FILE"], "a") as f:
    f.write(__name__ + "\n")  # every run of this script's top level, under its name
from tracereplay.forkserver import worker_context

def child() -> None:
    pass

if __name__ == "__main__":
    ctx = worker_context(start=True)
    for _ in range(3):
        p = ctx.Process(target=child)
        p.start()
        p.join()
        assert p.exitcode == 0, p.exitcode
"""


def test_the_main_script_is_run_once_by_the_fork_server_not_by_every_child(
    tmp_path: Path,
) -> None:
    # Python's fork server reads the main script's path under a key it is no longer given
    # (3.11-3.13): each child then ran the script again (for the CLI, all its imports)
    script = tmp_path / "main_runs.py"
    script.write_text(MAIN_RUNS)
    runs = tmp_path / "runs"
    env = {**os.environ, "MAIN_RUNS_FILE": str(runs)}
    subprocess.run([sys.executable, str(script), str(runs)], env=env, check=True, timeout=120)
    assert runs.read_text().split() == ["__main__", "__mp_main__"]  # the parent, the server


def test_server_running_follows_the_fork_server() -> None:
    # what start_agent_server asks before reading the agent's source for the preload
    out = subprocess.run(
        [sys.executable, "-c",
         "from tracereplay.forkserver import end_workers, server_running, worker_context\n"
         "seen = [server_running()]\n"
         "worker_context([], start=True)\n"
         "seen.append(server_running())\n"
         "end_workers()\n"
         "print(seen + [server_running()])"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert out.stdout.strip() == "[False, True, False]"
