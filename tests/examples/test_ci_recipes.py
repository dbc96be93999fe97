"""The CI recipes in examples/ci/ run as written: their shell steps, in a git repository of a
sample project (an agent, its store committed in evals/), on a pull request that changes
nothing and on one that regresses. Only the install step is left out: tracereplay is already
installed here, and the index it names is not reachable from a test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "examples" / "ci"
BIN = Path(sys.executable).parent

AGENT = """
import tracereplay


@tracereplay.tool
def get_weather(city: str) -> dict:
    return {"city": city, "temp": 21}


def answer(query: str) -> str:
    city = query.rstrip("?").rsplit(" ", 1)[-1]
    weather = get_weather(city)
    return f"In {city} it is {weather['temp']} degrees."
"""

RECORD = """
import tracereplay
from my_agent import answer

tracereplay.configure(service_name="weather", db="evals/tracereplay.duckdb")
for city in ["Paris", "Rome"]:
    query = f"What is the weather in {city}?"
    with tracereplay.agent_run("weather_agent", query=query) as run:
        run.set_response(answer(query))
tracereplay.flush()
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY_", "PYTEST_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(GIT_AUTHOR_NAME="ci", GIT_AUTHOR_EMAIL="ci@example.com")
    env.update(GIT_COMMITTER_NAME="ci", GIT_COMMITTER_EMAIL="ci@example.com", **extra)
    return env


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's repository: main has the agent and its committed store; branch ``same``
    changes a comment, branch ``regressed`` changes what the agent answers."""
    root = tmp_path_factory.mktemp("origin")
    _git(root, "init", "-q", "-b", "main")
    (root / "my_agent.py").write_text(textwrap.dedent(AGENT))
    (root / "evals").mkdir()
    subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RECORD)], cwd=root, env=_env(PYTHONPATH=str(root)),
        check=True, timeout=120,
    )  # fmt: skip
    subprocess.run(
        [BIN / "tracereplay", "--db", "evals/tracereplay.duckdb", "promote", "--where",
         "kind = 'live'", "--suite", "weather"],
        cwd=root, env=_env(), check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (root / ".gitignore").write_text("*.lock\n*.spool/\n*.wal\n")
    _git(root, "add", "-A")
    subprocess.run(
        ["git", "commit", "-q", "-m", "agent and its suite"], cwd=root, env=_env(), check=True
    )
    for branch, change in [
        ("same", ('return f"In', '# a comment only\n    return f"In')),
        ("regressed", ("degrees.", 'degrees, I think." if city == "Rome" else f"x')),
    ]:
        _git(root, "checkout", "-q", "-b", branch, "main")
        source = (root / "my_agent.py").read_text()
        (root / "my_agent.py").write_text(source.replace(*change, 1))
        subprocess.run(["git", "commit", "-qam", branch], cwd=root, env=_env(), check=True)
    _git(root, "checkout", "-q", "main")
    return root


def _workspace(origin: Path, tmp_path: Path, branch: str) -> Path:
    work = tmp_path / "workspace"
    _git(tmp_path, "clone", "-q", str(origin), str(work))
    _git(work, "checkout", "-q", branch)
    return work


def _steps(name: str) -> tuple[list[str], dict[str, str]]:
    """The recipe's shell commands, in order, without the install step, and its env."""
    doc = yaml.safe_load((RECIPES / name).read_text())
    if name == "github-actions.yml":
        [job] = doc["jobs"].values()
        runs = [s["run"] for s in job["steps"] if "run" in s and s.get("name") != "Install"]
        return runs, dict(job["env"])
    [job] = [v for v in doc.values() if isinstance(v, dict) and "script" in v]
    runs = [line for line in job["script"] if not line.startswith("pip install")]
    return runs, dict(job["variables"])


def _run_github(origin: Path, tmp_path: Path, branch: str) -> list[int]:
    work = _workspace(origin, tmp_path, branch)
    steps, env = _steps("github-actions.yml")
    (tmp_path / "runner").mkdir()
    values = {k: v.replace("${{ github.workspace }}", str(work)) for k, v in env.items()}
    values.update(GITHUB_BASE_REF="main", RUNNER_TEMP=str(tmp_path / "runner"))
    codes = []
    for step in steps:  # GitHub's shell for run steps: bash -e -o pipefail
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step], cwd=work,
            env=_env(**values), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        codes.append(done.returncode)
        if done.returncode:
            break
    assert (work / "junit.xml").exists() and (work / "report.html").exists()
    return codes


def _run_gitlab(origin: Path, tmp_path: Path, branch: str) -> list[int]:
    work = _workspace(origin, tmp_path, branch)
    steps, variables = _steps("gitlab-ci.yml")
    (tmp_path / "builds").mkdir()
    values = {
        k: v.replace("$CI_PROJECT_DIR", str(work)) for k, v in variables.items() if k != "GIT_DEPTH"
    }
    values.update(
        CI_PROJECT_DIR=str(work), CI_BUILDS_DIR=str(tmp_path / "builds"),
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main",
    )  # fmt: skip
    codes = []
    for line in steps:  # a GitLab job stops at the first script line that fails
        done = subprocess.run(
            ["bash", "-c", line], cwd=work, env=_env(**values), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        codes.append(done.returncode)
        if done.returncode:
            break
    return codes


@pytest.mark.parametrize("run", [_run_github, _run_gitlab], ids=["github", "gitlab"])
def test_a_pull_request_that_changes_nothing_passes(origin: Path, tmp_path: Path, run) -> None:
    codes = run(origin, tmp_path, "same")
    assert set(codes) == {0}, codes


@pytest.mark.parametrize("run", [_run_github, _run_gitlab], ids=["github", "gitlab"])
def test_a_regression_fails_the_diff_step(origin: Path, tmp_path: Path, run) -> None:
    codes = run(origin, tmp_path, "regressed")
    assert codes[-1] == 1 and set(codes[:-1]) == {0}, codes
