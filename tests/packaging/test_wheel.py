"""The package as a user installs it: the wheel built from this checkout (``make dist`` builds
the same), installed into a fresh venv outside the checkout, runs the whole user path there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

AGENT = """
import tracereplay


@tracereplay.tool
def get_weather(city: str) -> dict:
    return {"city": city, "temp": 21}


def answer(query: str) -> str:
    city = query.rstrip("?").rsplit(" ", 1)[-1]
    return f"In {city} it is {get_weather(city)['temp']} degrees."


if __name__ == "__main__":
    tracereplay.configure(service_name="weather")
    for city in ["Paris", "Rome"]:
        query = f"What is the weather in {city}?"
        with tracereplay.agent_run("weather_agent", query=query) as run:
            run.set_response(answer(query))
    tracereplay.flush()
"""


def _run(cmd: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY_", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(cwd)
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kwargs
    )
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(
        [sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(REPO)], out
    )
    [built] = out.glob("tracereplay-*.whl")
    assert list(out.glob("tracereplay-*.tar.gz")), "no sdist"
    return built


def test_the_wheel_holds_what_the_commands_need(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    migrations = {n for n in names if n.startswith("tracereplay/store/migrations/")}
    in_repo = {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "tracereplay/store/migrations").glob("*.sql")
    }
    assert in_repo <= migrations
    for folder in ("ui/templates", "ui/static"):
        for p in (REPO / "tracereplay" / folder).iterdir():
            assert f"tracereplay/{folder}/{p.name}" in names, p
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[pytest11]" in text and "tracereplay = tracereplay.cli.app:main" in text


def test_installed_into_a_fresh_venv_the_whole_user_path_works(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    pip, bin_dir = venv / "bin" / "pip", venv / "bin"
    # --no-compile: what the test runs is compiled on import; byte-compiling all of pyarrow,
    # duckdb and the rest first costs about 5 s of CPU (18.8 against 14.2 s) and tests nothing
    _run([str(pip), "install", "-q", "--no-compile", str(wheel)], tmp_path)
    project = tmp_path / "project"  # a project of the user's, far from this checkout
    project.mkdir()
    (project / "agent.py").write_text(textwrap.dedent(AGENT))
    tr = str(bin_dir / "tracereplay")
    python = str(bin_dir / "python")

    # without the ui extra, `ui` names it in one line
    no_ui = subprocess.run([tr, "ui", "--port", "0"], cwd=project, capture_output=True, text=True)
    assert no_ui.returncode == 2
    assert "pip install 'tracereplay[ui]'" in no_ui.stderr and "Traceback" not in no_ui.stderr

    # the ui extra, and pytest (the plugin comes with the package, by its entry point)
    _run([str(pip), "install", "-q", "--no-compile", f"{wheel}[ui]", "pytest"], tmp_path)
    _run([python, "agent.py"], project)  # captured by the SDK into ./tracereplay.duckdb
    assert "weather_agent" in _run([tr, "runs"], project).stdout
    _run([tr, "promote", "--where", "kind = 'live'", "--suite", "weather"], project)
    assert "2 of 2 cases passed" in _run([tr, "eval", "weather"], project).stdout
    replayed = _run([tr, "eval", "weather", "--agent", "agent:answer"], project)
    assert "2 of 2 cases passed" in replayed.stdout
    rows = _run([tr, "sql", "SELECT mode, passed FROM eval_runs ORDER BY started_at"], project)
    assert "recorded" in rows.stdout and "replay" in rows.stdout
    _run([tr, "report", "-o", "report.html"], project)
    assert "weather" in (project / "report.html").read_text()
    plugin = _run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tracereplay", "weather",
         "--tracereplay-agent", "agent:answer"],
        project,
    )  # fmt: skip
    assert "2 passed" in plugin.stdout

    server = subprocess.Popen(
        [tr, "ui", "--port", "0"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://\S+", line)
        assert url, line
        deadline = time.monotonic() + 30
        while True:
            try:
                page = urllib.request.urlopen(url.group(0) + "runs", timeout=10).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert "weather_agent" in page
    finally:
        server.terminate()
        server.wait(timeout=30)
