"""What the eval imports before it starts its agent processes' fork server, and what an agent
process imports: the first agent process waits for the fork server's imports, so the server
starts before the eval's own heavy imports, and it imports only what an attempt needs."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has once ``code`` ran."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return set(out.stdout.split())


def test_the_eval_command_starts_the_fork_server_before_importing_the_models() -> None:
    # what `tracereplay eval --agent ...` has imported when it calls start_agent_server()
    loaded = _modules_after(
        "import tracereplay.cli.app, tracereplay.cli.eval_cmd, tracereplay.replay.workers.preload"
    )
    assert "tracereplay.replay.workers.preload" in loaded
    assert not {"pydantic", "tracereplay.models", "tracereplay.checks.registry"} & loaded


def test_an_agent_process_has_the_built_in_checks_and_no_store() -> None:
    # the fork server's preload: each agent process starts with the built-in checks imported,
    # and none imports DuckDB (it writes its spans to the spool; the eval reads the store)
    loaded = _modules_after("import tracereplay.replay.workers.agent_child")
    assert {"tracereplay.checks.text", "tracereplay.checks.passfail"} <= loaded
    assert "duckdb" not in loaded and "pyarrow" not in loaded


def test_agent_processes_import_httpx_without_its_command_line_client() -> None:
    # httpx imports its CLI (click, rich) whenever they are installed: the fork server's
    # preload (imported here as the fork server does) defers it; httpx.main runs the command
    code = (
        "from tracereplay.replay.workers.preload import PRELOAD\n"
        "for name in PRELOAD:\n    __import__(name)"
    )
    loaded = _modules_after(code)
    assert "httpx" in loaded
    assert not {"httpx._main", "click", "rich", "typer"} & loaded
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport httpx\nhttpx.main(['--help'])"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Usage: httpx <URL>" in out.stdout


def test_the_command_starts_the_fork_server_first_for_an_eval_with_agent_processes() -> None:
    # tracereplay's main() starts the agents' fork server before it parses the command line;
    # only for `eval --agent` without --in-process
    started = {}
    for args in (
        ["--db", "x.duckdb", "eval", "weather", "--agent", "agent:run"],
        ["eval", "weather", "--agent=agent:run", "--concurrency", "2"],
        ["eval", "weather", "--agent", "agent:run", "--in-process"],
        ["eval", "weather"],
        ["runs", "--agent"],
    ):
        out = subprocess.run(
            [sys.executable, "-c",
             "import multiprocessing.forkserver as fs\n"
             "from tracereplay.cli.app import start_agent_server_early\n"
             "from tracereplay.forkserver import end_workers\n"
             f"start_agent_server_early({args!r})\n"
             "print(fs._forkserver._forkserver_pid is not None)\n"
             "end_workers()"],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        started[" ".join(args)] = out.stdout.strip() == "True"
    assert list(started.values()) == [True, True, False, False, False], started
