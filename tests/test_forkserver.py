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
