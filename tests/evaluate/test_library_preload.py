"""The agent's installed libraries imported once in the agent processes' fork server: which
ones are found (by reading the agent's source), which are kept there (an import that starts a
thread, sets OpenTelemetry's global tracer provider or fails is given back), and a whole eval
whose agent processes start with its library imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from calculator_store import calculator_store

from tracereplay.replay.workers.agent_libraries import agent_libraries


def _library(site: Path, name: str, body: str, **modules: str) -> None:
    """An installed package ``name`` (``site`` is a site-packages folder) with ``modules``."""
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(body)
    for module, text in modules.items():
        (site / name / f"{module}.py").write_text(text)


def test_the_installed_libraries_the_agent_and_its_project_modules_import(
    tmp_path: Path, monkeypatch
) -> None:
    site = tmp_path / "venv" / "site-packages"
    _library(site, "framework", "class Agent: ...\n", graph="X = 1\n", tools="Y = 2\n")
    _library(site, "provider", "")
    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "helpers.py").write_text(
        "from provider import *\nfrom . import settings\nimport json, tracereplay\n"
    )
    (project / "app" / "settings.py").write_text("from framework import tools\n")
    (project / "agent.py").write_text(
        "import os\nfrom framework import Agent\nimport framework.graph\n"
        "from app.helpers import thing\nimport not_installed_anywhere\n"
        "def build():\n    import provider\n"
    )
    monkeypatch.syspath_prepend(str(site))
    found = agent_libraries("agent:build", cwd=str(project))
    # Agent is a name in `framework`, not a module; the stdlib, tracereplay and the project's
    # own modules are not libraries; app.settings (imported relatively) is read too
    assert found == ["framework", "framework.graph", "provider", "framework.tools"]
    assert agent_libraries("missing_module:x", cwd=str(project)) == []
    assert agent_libraries("", cwd=str(project)) == []
    (project / "broken.py").write_text("import framework\ndef (:\n")
    assert agent_libraries("broken:x", cwd=str(project)) == []


def test_nothing_is_preloaded_for_code_that_sets_the_environment_as_it_is_imported(
    tmp_path: Path, monkeypatch
) -> None:
    # a library imported after `load_dotenv()` or `os.environ[...] = ...` may read it at
    # import: the fork server, started as the eval began, would not see it
    site = tmp_path / "site-packages"
    _library(site, "framework", "")
    monkeypatch.syspath_prepend(str(site))
    for setting in (
        "from dotenv import load_dotenv\nload_dotenv()",
        "import os\nos.environ['FRAMEWORK_TELEMETRY'] = 'off'",
        "import os\nif True:\n    os.environ.setdefault('FRAMEWORK_KEY', 'x')",
        "from os import environ\ndel environ['FRAMEWORK_KEY']",
    ):
        (tmp_path / "agent.py").write_text(f"{setting}\nimport framework\n")
        assert agent_libraries("agent:run", cwd=str(tmp_path)) == [], setting
    # the same inside a function runs when it is called, after every import
    (tmp_path / "agent.py").write_text(
        "import os\nimport framework\ndef run(q):\n    os.environ['X'] = q\n"
    )
    assert agent_libraries("agent:run", cwd=str(tmp_path)) == ["framework"]


def _preloaded(site: Path, names: list[str]) -> dict[str, object]:
    """What the fork server's preload of ``names`` leaves (run as the fork server runs it)."""
    code = (
        "import json, sys, threading\n"
        "from tracereplay.replay.workers import library_preload as p\n"
        "from opentelemetry import trace\n"
        "print(json.dumps({'imported': p.imported, 'refused': p.refused,\n"
        "  'modules': sorted(m for m in ('plain', 'plain.sub', 'threaded', 'failing',\n"
        "                                'tracing', 'later') if m in sys.modules),\n"
        "  'threads': threading.active_count(),\n"
        "  'provider': type(trace.get_tracer_provider()).__name__}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), *sys.path]))
    env["TRACEREPLAY_PRELOAD_LIBRARIES"] = os.pathsep.join(names)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_preload_ends_at_a_library_whose_import_fails_or_changes_the_process(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site-packages"
    _library(site, "plain", "VALUE = 1\n", sub="import plain\n")
    _library(site, "threaded", "import threading\nthreading.Thread(target=print).start()\n")
    _library(site, "failing", "import plain.sub\nraise RuntimeError('no config')\n")
    _library(site, "later", "")
    _library(
        site, "tracing",
        # (the SDK's TracerProvider() starts threads: it would be refused for those already)
        "from opentelemetry import trace\ntrace.set_tracer_provider(trace.NoOpTracerProvider())\n",
    )  # fmt: skip
    common = {"threads": 1, "provider": "ProxyTracerProvider"}
    # a thread refused: its import fails, Python takes `threaded` out again (each agent
    # process imports it itself, thread and all); nothing after it is imported
    assert _preloaded(site, ["plain.sub", "threaded", "later"]) == {
        "imported": ["plain.sub"], "refused": ["threaded"], "modules": ["plain", "plain.sub"],
        **common,
    }  # fmt: skip
    # a failed import: what it imported in full stays, as Python leaves it
    assert _preloaded(site, ["failing", "later"]) == {
        "imported": [], "refused": ["failing"], "modules": ["plain", "plain.sub"], **common
    }  # fmt: skip
    # OpenTelemetry's global tracer provider set: put back, as if it had never been set
    assert _preloaded(site, ["tracing", "later"]) == {
        "imported": [], "refused": ["tracing"], "modules": ["tracing"], **common
    }  # fmt: skip


PRELOADED = """
import os
with open(os.environ["IMPORTS_LOG"], "a") as f:
    f.write(f"{__name__} {os.getpid()}\\n")
"""

THREADED = PRELOADED + "import threading\nthreading.Thread(target=print).start()\n"

AGENT = """
import os
import preloaded
import threaded
from calc import agent as _agent


def agent(query: str) -> str:
    with open(os.environ["IMPORTS_LOG"], "a") as f:
        f.write(f"agent {os.getpid()}\\n")
    return _agent(query)
"""


def test_agent_processes_start_with_the_agents_library_imported(tmp_path: Path) -> None:
    cwd = calculator_store(tmp_path)
    site = tmp_path / "lib" / "site-packages"
    # a library that imports OpenTelemetry's logs SDK (as CrewAI does), whose first import
    # starts a thread pool: the fork server imports that SDK first, so it is preloaded too
    _library(site, "preloaded", PRELOADED + "from opentelemetry.sdk._logs import LoggerProvider\n")
    _library(site, "threaded", THREADED)
    (cwd / "calcpre.py").write_text(AGENT)
    log = tmp_path / "imports.log"
    env = dict(os.environ, IMPORTS_LOG=str(log), PYTHONPATH=f"{cwd}{os.pathsep}{site}")
    env = {k: v for k, v in env.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    out = subprocess.run(
        [sys.executable, "-m", "tracereplay", "eval", "calc", "--agent", "calcpre:agent"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr + out.stdout
    assert "PASSED" in out.stdout and "FAILED" not in out.stdout
    lines = [line.split() for line in log.read_text().splitlines()]
    agents = {pid for what, pid in lines if what == "agent"}
    preloaded = [pid for what, pid in lines if what == "preloaded"]
    threaded = [pid for what, pid in lines if what == "threaded"]
    # imported once, by the fork server, not by the agent process(es) that ran the cases
    assert len(preloaded) == 1 and preloaded[0] not in agents, lines
    # the library that starts a thread: tried in the fork server, given back, so each agent
    # process imports it itself (and has its thread)
    assert agents <= set(threaded) and len(threaded) == len(agents) + 1, lines
