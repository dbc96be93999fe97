"""The pytest plugin as a user runs it: pytest in a subprocess, in a sample project of its own
(an SDK agent, a store of its recorded runs promoted into a suite), with the plugin found
through its ``pytest11`` entry point."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tracereplay
from tracereplay.cli.app import app
from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow

AGENT = '''
import os

import tracereplay


@tracereplay.tool
def get_weather(city: str) -> dict:
    """Current weather; writes a mark when it really runs (a replay must not)."""
    with open(os.environ["LIVE_MARKS"], "a") as marks:
        marks.write(city + "\\n")
    return {"city": city, "temp": int(os.environ.get("WEATHER_TEMP", "21"))}


def answer(query: str) -> str:
    city = query.rstrip("?").rsplit(" ", 1)[-1]
    weather = get_weather(city)
    if city in os.environ.get("BROKEN_CITIES", "").split(","):
        return "I could not find out."
    return f"In {city} it is {weather['temp']} degrees."
'''

RECORD = """
import sys

import tracereplay
from my_agent import answer

tracereplay.configure(service_name="weather", db=sys.argv[1])
for city in ["Paris", "Rome", "Oslo"]:
    query = f"What is the weather in {city}?"
    with tracereplay.agent_run("weather_agent", query=query) as run:
        run.set_response(answer(query))
tracereplay.flush()
"""

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pytest.md").read_text()
#: the test file of docs/pytest.md, as written there
OWN_TESTS = re.findall(r"^```python\n(.*?)^```", DOC, re.S | re.M)[0]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sample project: my_agent.py, three recorded runs promoted into suite ``weather``."""
    root = tmp_path_factory.mktemp("project")
    (root / "my_agent.py").write_text(textwrap.dedent(AGENT))
    (root / "record.py").write_text(textwrap.dedent(RECORD))
    (root / "evals").mkdir()
    env = _env(root)
    subprocess.run(
        [sys.executable, "record.py", "evals/tracereplay.duckdb"],
        cwd=root,
        env=env,
        check=True,
        timeout=120,
    )
    promoted = _cli_here(root, "promote", "--where", "kind = 'live'", "--suite", "weather")
    assert promoted.exit_code == 0, promoted.output
    (root / "marks.txt").write_text("")
    return root


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TRACEREPLAY_"))}
    # a user's project has neither Hypothesis nor anyio (our test and UI extras bring them):
    # their plugins cost each pytest start (and each xdist worker) of the sample project 0.6 s
    # and 0.35 s of imports
    env.update(PYTEST_ADDOPTS="-p no:hypothesispytest -p no:anyio")
    # this checkout's tracereplay after the project's folder (a worktree's, not the one the
    # virtualenv installed)
    path = os.pathsep.join([str(root), str(Path(tracereplay.__file__).resolve().parents[1])])
    env.update(LIVE_MARKS=str(root / "marks.txt"), PYTHONPATH=path, **extra)
    return env


def pytest_in(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` in the sample project (no cache, no ini file of ours)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(root), *args],
        cwd=root, env=_env(root, **env), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _eval_runs(root: Path) -> list[dict]:
    with open_store(root / "evals/tracereplay.duckdb") as store:
        return store.query_dicts(
            "SELECT eval_run_id, mode, status, total_cases, passed, failed, errored"
            " FROM eval_runs ORDER BY started_at"
        )


REPLAY = ["--tracereplay", "weather", "--tracereplay-db", "evals/tracereplay.duckdb"]
AGENT_OPT = ["--tracereplay-agent", "my_agent:answer"]


def _cli_here(root: Path, *args: str) -> Any:
    """``tracereplay --db ... ARGS`` in this process, for the steps that are not about the
    plugin (promote, a recorded eval, diff, suite create): no interpreter to start for each."""
    return CliRunner().invoke(app, ["--db", str(root / "evals/tracereplay.duckdb"), *args])


def test_each_case_is_an_item_replayed_airtight_and_stored_as_one_eval_run(project: Path) -> None:
    # an eval run of `tracereplay eval` (recorded mode, in this process) for diff to compare with
    cli_eval = _cli_here(project, "eval", "weather")
    assert cli_eval.exit_code == 0, cli_eval.output
    before = len(_eval_runs(project))
    done = pytest_in(project, *REPLAY, *AGENT_OPT, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    for name in ("case0[what-is-the-weather-in-paris]", "case1[what-is-the-weather-in-rome]"):
        assert f"tracereplay:weather::{name} PASSED" in done.stdout
    assert (project / "marks.txt").read_text() == ""  # no tool ran for real
    runs = _eval_runs(project)
    assert len(runs) == before + 1
    last = runs[-1]
    assert (last["mode"], last["status"], last["total_cases"], last["passed"]) == (
        "replay", "completed", 3, 3,
    )  # fmt: skip
    assert f"eval run {last['eval_run_id']}" in done.stdout  # the terminal summary names it
    # the stored eval run is what `tracereplay eval` stores: diff compares the two
    diffed = _cli_here(project, "diff", "--last", "--suite", "weather")
    assert diffed.exit_code == 0, diffed.output
    assert "regressed" in diffed.stdout.lower() and "3" in diffed.stdout


def test_a_regressed_case_fails_with_its_verdict_reason_and_response(project: Path) -> None:
    junit = project / "junit.xml"
    done = pytest_in(project, *REPLAY, *AGENT_OPT, f"--junitxml={junit}", BROKEN_CITIES="Rome")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    assert "FAILED: " in done.stdout and "query: What is the weather in Rome?" in done.stdout
    assert "response: I could not find out." in done.stdout
    cases = ET.parse(junit).getroot().iter("testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["case1[what-is-the-weather-in-rome]"]
    assert _eval_runs(project)[-1]["failed"] == 1


def test_k_selects_cases_by_query_text_seq_and_tag(project: Path) -> None:
    # recorded mode; the query text of case0, the seq of case2 (docs/pytest.md's `-k rome` is
    # test_the_docs_command_lines_run's)
    done = pytest_in(project, *REPLAY, "-k", "seq2 or paris", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 1 deselected" in done.stdout, done.stdout
    assert _eval_runs(project)[-1]["total_cases"] == 2  # only the selected cases were evaluated


def test_x_stops_at_the_first_case_that_does_not_pass(project: Path) -> None:
    done = pytest_in(project, *REPLAY, *AGENT_OPT, "-x", "-q", BROKEN_CITIES="Paris,Rome")
    assert done.returncode == 1
    assert done.stdout.rstrip().splitlines()[-1].startswith("1 failed in"), done.stdout
    last = _eval_runs(project)[-1]
    assert (last["total_cases"], last["failed"]) == (1, 1)  # the eval stopped there too


def test_xdist_workers_make_one_eval_run(project: Path) -> None:
    before = len(_eval_runs(project))
    done = pytest_in(project, *REPLAY, *AGENT_OPT, "-n", "2", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    runs = _eval_runs(project)
    assert len(runs) == before + 1
    assert (runs[-1]["total_cases"], runs[-1]["passed"]) == (3, 3)
    assert (project / "marks.txt").read_text() == ""


def _drift(root: Path, eval_run_id: str) -> list[dict]:
    with open_store(root / "evals/tracereplay.duckdb") as store:
        rows = store.query_dicts(
            "SELECT drift FROM case_results WHERE eval_run_id = ?", [eval_run_id]
        )
    return [json.loads(r["drift"]) for r in rows]


def test_tools_run_live_against_recorded_decisions(project: Path) -> None:
    """--tracereplay-llm recorded --tracereplay-live-tools: every tool runs for real; a
    changed data source is tool-result drift, which a toolResultsMatch check fails on."""
    checks = project / "checks.yaml"
    checks.write_text("- kind: toolResultsMatch\n  mode: json\n")
    created = _cli_here(project, "suite", "create", "weather-tools", "--checks", str(checks))
    assert created.exit_code == 0, created.output
    promoted = _cli_here(project, "promote", "--where", "kind = 'live'", "--suite", "weather-tools")
    assert promoted.exit_code == 0, promoted.output
    args = ["--tracereplay", "weather-tools", "--tracereplay-db", "evals/tracereplay.duckdb"]
    live = ["--tracereplay-llm", "recorded", "--tracereplay-live-tools"]
    try:
        done = pytest_in(project, *args, *AGENT_OPT, *live, "-q", WEATHER_TEMP="23")
        marks = (project / "marks.txt").read_text().split()
    finally:
        (project / "marks.txt").write_text("")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 failed" in done.stdout
    assert sorted(marks) == ["Oslo", "Paris", "Rome"]  # every tool ran for real
    text = " ".join(done.stdout.split())
    assert "1 tool call(s) ran for real: 0 result(s) as recorded, 1 differ" in text
    assert "tool-result drift: get_weather" in text and '+ "temp": 23' in text
    run = _eval_runs(project)[-1]
    for drift in _drift(project, run["eval_run_id"]):
        [changed] = drift["tool_result_drift"]
        assert '"temp":21' in changed["recorded_result"].replace(" ", "")
        assert '"temp":23' in changed["live_result"].replace(" ", "")


def test_the_ini_file_names_suite_agent_store_and_a_fork(project: Path) -> None:
    """A plain ``pytest`` runs the suite the ini file names, with its agent and store (one run
    for those keys and the fork's: the fork's assertions need the others to have worked)."""
    (project / "pytest.ini").write_text(
        "[pytest]\ntracereplay_suite = weather\ntracereplay_agent = my_agent:answer\n"
        "tracereplay_db = evals/tracereplay.duckdb\ntracereplay_llm = recorded\n"
        "tracereplay_llm_until = 0\n"
    )
    try:
        done = pytest_in(project, "-q")
    finally:
        (project / "pytest.ini").unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert (project / "marks.txt").read_text() == ""  # no tool ran for real
    run = _eval_runs(project)[-1]
    assert all(d["llm"]["fork_round"] == 0 for d in _drift(project, run["eval_run_id"]))
    with open_store(project / "evals/tracereplay.duckdb") as store:
        [row] = store.query_dicts(
            "SELECT options FROM eval_runs WHERE eval_run_id = ?", [run["eval_run_id"]]
        )
    options = json.loads(row["options"])
    assert options["llm_until"] == 0
    assert options["concurrency"] == 4  # a fork's calls go live: eval's default, unchanged


def test_a_concurrency_of_0_in_the_ini_file_is_refused(project: Path) -> None:
    """Given, it is checked as ``eval --concurrency`` is (unset: ``default_concurrency``)."""
    (project / "pytest.ini").write_text("[pytest]\ntracereplay_concurrency = 0\n")
    try:
        done = pytest_in(project, *REPLAY, *AGENT_OPT, "-q")
    finally:
        (project / "pytest.ini").unlink()
    assert done.returncode == 1
    assert "could not be evaluated: --concurrency must be 1 to 256, not 0" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_fork_needs_the_recorded_llm(project: Path) -> None:
    done = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-llm-until", "1")
    assert done.returncode == 4  # pytest's usage error
    assert "--tracereplay-llm-until applies to --tracereplay-llm recorded" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_parametrized_cases_in_your_own_test_function(project: Path) -> None:
    (project / "test_own.py").write_text(textwrap.dedent(OWN_TESTS))
    try:
        done = pytest_in(
            project, "test_own.py", "-q", "--tracereplay-db", "evals/tracereplay.duckdb"
        )
    finally:
        (project / "test_own.py").unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert (project / "marks.txt").read_text() == ""


def test_an_unknown_suite_is_one_usage_error(project: Path) -> None:
    done = pytest_in(
        project, "--tracereplay", "nope", "--tracereplay-db", "evals/tracereplay.duckdb"
    )
    assert done.returncode == 4  # pytest's usage error
    assert "tracereplay: suite 'nope'" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_an_agent_that_does_not_load_fails_each_item_in_one_line(project: Path) -> None:
    done = pytest_in(project, *REPLAY, "--tracereplay-agent", "nope:answer", "-q")
    assert done.returncode == 1
    assert "3 failed" in done.stdout
    assert "ERROR: the suite could not be evaluated: --agent 'nope:answer'" in done.stdout
    assert "Traceback" not in done.stdout and "UsageError" not in done.stdout


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_without_a_suite_the_plugin_does_nothing(project: Path, workers: list[str]) -> None:
    (project / "test_plain.py").write_text("def test_one():\n    assert True\n")
    try:
        done = pytest_in(project, "test_plain.py", "-q", *workers)
    finally:
        (project / "test_plain.py").unlink()
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout
    assert "tracereplay" not in done.stdout
    assert json.dumps(done.stdout)  # printable


def _doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC, re.S | re.M)


@pytest.mark.parametrize(
    "line",
    [
        re.sub(r"\s+#.*$", "", line).strip()
        for block in _doc_blocks("sh")
        for line in block.splitlines()
        if line.startswith("pytest ")
    ],
)
def test_the_docs_command_lines_run(project: Path, line: str) -> None:
    args = line.split()[1:]
    try:
        done = pytest_in(project, *args, TRACEREPLAY_DB=str(project / "evals/tracereplay.duckdb"))
    finally:
        (project / "marks.txt").write_text("")  # --tracereplay-live-tools runs the tools
    assert done.returncode == 0, line + "\n" + done.stdout + done.stderr
    assert " passed" in done.stdout


def test_the_docs_pyproject_settings_run(project: Path) -> None:
    [toml] = _doc_blocks("toml")
    (project / "pyproject.toml").write_text(toml)
    try:
        done = pytest_in(project, "-q")
    finally:
        (project / "pyproject.toml").unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


def test_gates_decide_the_session_exit_status(project: Path) -> None:
    """--tracereplay-fail-under and --tracereplay-max-regressions mean what eval's do."""
    under = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-fail-under", "50",
                      BROKEN_CITIES="Rome")  # fmt: skip
    assert under.returncode == 0, under.stdout + under.stderr  # 2 of 3: 66.7% >= 50%
    assert "1 failed, 2 passed" in under.stdout
    assert "pass rate 66.7% at or above --tracereplay-fail-under 50%" in under.stdout
    above = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-fail-under", "90",
                      BROKEN_CITIES="Rome")  # fmt: skip
    assert above.returncode == 1, above.stdout + above.stderr
    clean = pytest_in(project, *REPLAY, *AGENT_OPT)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    regressed = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-max-regressions", "0",
                          BROKEN_CITIES="Rome")  # fmt: skip
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "regressions: 1 (max 0) against eval run" in regressed.stdout
    still = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-max-regressions", "0",
                      BROKEN_CITIES="Rome")  # fmt: skip
    assert still.returncode == 0, still.stdout + still.stderr  # failing in the baseline too
    own = project / "gated_own_test.py"  # a failing test of one's own: no gate excuses it
    own.write_text("def test_own():\n    assert False\n")
    try:
        mixed = pytest_in(project, *REPLAY, "--tracereplay-fail-under", "0", own.name)
    finally:
        own.unlink()
    assert mixed.returncode == 1, mixed.stdout + mixed.stderr
    assert "1 failed, 3 passed" in mixed.stdout
    bad = pytest_in(project, *REPLAY, "--tracereplay-fail-under", "120")
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "--tracereplay-fail-under must be a pass rate in percent, 0 to 100" in bad.stderr


#: the sample agent as a command of its own (its tracereplay SDK sends OTLP where the eval says)
AGENT_COMMAND = """
import sys

import tracereplay
from my_agent import answer

tracereplay.configure(service_name="weather")  # OTEL_EXPORTER_OTLP_*: the eval's receiver
query = sys.stdin.read()
with tracereplay.agent_run("weather_agent", query=query) as run:
    text = answer(query)
    run.set_response(text)
tracereplay.flush()
print(text)
"""


def test_an_agent_command_replays_each_case(project: Path) -> None:
    """``--tracereplay-agent-cmd``: each case replayed by a command (its tools run live)."""
    (project / "agent_command.py").write_text(textwrap.dedent(AGENT_COMMAND))
    command = f"{sys.executable} agent_command.py"
    try:
        done = pytest_in(project, *REPLAY, "--tracereplay-agent-cmd", command, "-q")
        both = pytest_in(project, *REPLAY, *AGENT_OPT, "--tracereplay-agent-cmd", command)
    finally:
        (project / "agent_command.py").unlink()
        marks = (project / "marks.txt").read_text().split()
        (project / "marks.txt").write_text("")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    assert sorted(marks) == ["Oslo", "Paris", "Rome"]  # a command's tools run as it runs them
    last = _eval_runs(project)[-1]
    assert (last["mode"], last["passed"]) == ("replay", 3)
    assert both.returncode == 4  # pytest's usage error
    assert "--tracereplay-agent-cmd and --tracereplay-agent are mutually exclusive" in both.stderr
