"""A calculator agent on the tracereplay SDK, its two runs recorded and promoted into suite
``calc``, and the same agent with its tool's arguments renamed (``calc:renamed``): the store the
reason tests (CLI and UI) read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CALCULATOR = '''
import tracereplay
from tracereplay.sdk import agent_run, tool


@tool
def add(a: float, b: float) -> float:
    return a + b


@tool(name="add")
def add_renamed(x: float, y: float) -> float:
    return x + y


def _numbers(query: str) -> list[float]:
    return [float(t) for t in query.split() if t.isdigit()]


def agent(query: str) -> str:
    a, b = _numbers(query)
    return f"The sum is {add(a=a, b=b)}, as the long-winded calculator will tell you at length."


def renamed(query: str) -> str:
    """The same agent after its tool's arguments were renamed (a, b -> x, y)."""
    x, y = _numbers(query)
    return f"The sum is {add_renamed(x=x, y=y)}, as the long-winded calculator will tell you."


def slow(query: str) -> str:
    """The agent stuck on something (an ERROR past ``--timeout``)."""
    import time

    time.sleep(3)
    return agent(query)


def silent(query: str) -> str:
    """The agent answering nothing at all."""
    _numbers(query)
    add(**dict(zip("ab", _numbers(query))))
    return ""


if __name__ == "__main__":
    tracereplay.configure(service_name="calculator")
    for query in ("add 1 and 2", "add 3 and 4"):
        with agent_run("calculator", query) as run:
            run.set_response(agent(query))
    tracereplay.flush()
'''


def calc_cli(cwd: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd`` (the store is its default ``./tracereplay.duckdb``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    env.update(PYTHONPATH=str(cwd), COLUMNS=str(columns))
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def calculator_store(cwd: Path) -> Path:
    """Two recorded calculator runs promoted into suite ``calc``."""
    (cwd / "calc.py").write_text(CALCULATOR)
    recorded = calc_cli(cwd, "calc.py")
    assert recorded.returncode == 0, recorded.stderr
    ids = calc_cli(cwd, "-m", "tracereplay", "sql", "SELECT run_id FROM runs", "--format", "csv")
    for run_id in ids.stdout.split()[1:]:
        promoted = calc_cli(cwd, "-m", "tracereplay", "promote", run_id, "--suite", "calc")
        assert promoted.returncode == 0, promoted.stderr
    return cwd
