"""Every command and every option of the CLI is documented in docs/ (or the README)."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from tracereplay.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = "\n".join(
    p.read_text(encoding="utf-8") for p in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
)


def _commands():
    """(command path, its click command) for every command, groups' commands included."""
    root = typer.main.get_command(app)
    ctx = root.make_context("tracereplay", ["--help"], resilient_parsing=True)
    stack = [((), root)]
    while stack:
        path, cmd = stack.pop()
        subs = getattr(cmd, "commands", None)
        if subs:
            stack += [((*path, name), sub) for name, sub in subs.items()]
        elif path:
            yield " ".join(path), cmd
    del ctx


def test_every_command_and_option_is_documented() -> None:
    missing = []
    for path, cmd in _commands():
        if not re.search(rf"tracereplay {re.escape(path)}\b|`{re.escape(path)}\b", DOCS):
            missing.append(f"command `{path}`")
        for param in cmd.params:
            for opt in [*param.opts, *param.secondary_opts]:
                if not opt.startswith("--") or opt == "--help":
                    continue
                if not re.search(rf"{re.escape(opt)}(?![\w-])", DOCS):
                    missing.append(f"`{path} {opt}`")
    assert not missing, "not documented in docs/: " + ", ".join(sorted(missing))


def test_every_command_help_has_an_example_and_exit_codes() -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    for path, _ in _commands():
        result = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (path, result.output)
        assert "Exit code" in result.output, f"`{path} --help` does not give its exit codes"
        assert "<bool>" not in result.output and "<str>" not in result.output, path
        width = max(len(line) for line in result.output.splitlines())
        assert width <= 80, f"`{path} --help` is {width} columns wide"
