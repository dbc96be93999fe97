"""The console script builds only the module of the command it runs (``app_for``): the names
``COMMAND_MODULES`` gives each module are the ones it registers, and a command run that way
behaves as with the whole app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracereplay.cli.app import COMMAND_MODULES, _command_name, app, app_for, build_app

BIN = Path(sys.executable).parent


def _names(built) -> set[str]:
    commands = {info.name for info in built.registered_commands}
    return commands | {info.name for info in built.registered_groups}


@pytest.mark.parametrize("module", list(COMMAND_MODULES))
def test_each_module_registers_the_names_it_is_listed_with(module: str) -> None:
    assert _names(build_app([module])) == set(COMMAND_MODULES[module])


def test_the_whole_app_has_every_command() -> None:
    every = {name for names in COMMAND_MODULES.values() for name in names}
    assert _names(app) == every


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["suite", "import", "f.yaml"], "suite"),
        (["--db", "x.duckdb", "eval", "s"], "eval"),
        (["--db=x.duckdb", "--store", "y", "runs"], "runs"),
        (["--help"], None),
        (["--version"], None),
        (["--db", "suite"], None),  # "suite" is the value of --db: no command named
        ([], None),
    ],
)
def test_the_command_name_is_the_first_argument_past_the_root_options(
    args: list[str], name: str | None
) -> None:
    assert _command_name(args) == name


def test_a_known_command_gets_its_module_only_and_anything_else_every_command() -> None:
    assert _names(app_for(["--db", "x.duckdb", "suite", "list"])) == {"suite", "case"}
    every = _names(app)
    assert _names(app_for(["--help"])) == every
    assert _names(app_for(["evl"])) == every  # the usage error suggests from every name


def test_a_command_run_by_the_console_script_and_its_usage_errors(tmp_path: Path) -> None:
    env = {**os.environ}
    env.pop("TRACEREPLAY_DB", None)
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\ncases:\n- query: hello\n")

    def tr(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(BIN / "tracereplay"), "--db", str(tmp_path / "t.duckdb"), *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env)

    done = tr("suite", "import", str(suite))
    assert (done.returncode, done.stdout) == (0, "suite 's' created with 1 cases\n")
    listed = tr("suite", "list", "--format", "json")
    assert '"name": "s"' in listed.stdout and '"cases": 1' in listed.stdout
    wrong = tr("evl")
    assert wrong.returncode == 2
    assert "No such command 'evl'. Did you mean 'eval'?" in wrong.stderr
