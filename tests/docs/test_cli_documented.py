"""Every command and every option of the CLI is documented in docs/ (or the README)."""

from __future__ import annotations

import functools
import inspect
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


@functools.cache
def _help(path: str, columns: int) -> str:
    """``tracereplay PATH --help`` at ``columns``: rendered once per test module (most of this
    module's cost), whichever tests read it."""
    from typer.testing import CliRunner

    args = [*path.split(), "--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _examples(doc: str) -> list[str]:
    """The example command lines of a docstring (indented lines starting with tracereplay)."""
    return [
        line.strip()
        for line in inspect.cleandoc(doc).splitlines()
        if line.startswith(" ") and line.strip().startswith("tracereplay ")
    ]


def _prose(doc: str) -> list[str]:
    """The docstring's paragraphs of prose (not indented, no rich markup), each on one line."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return [
        " ".join(p.split())
        for p in paragraphs
        if p.strip()
        and not any(line[:1].isspace() for line in p.splitlines())
        and "[" not in p
        and not p.lstrip().startswith("- ")
    ]


def test_every_command_help_has_an_example_that_fits_80_columns() -> None:
    for path, cmd in _commands():
        examples = _examples(cmd.help or "")
        assert examples, f"`{path} --help` has no example"
        shown = [line.strip() for line in _help(path, 80).splitlines()]
        for example in examples:
            assert example in shown, f"`{path} --help`: {example!r} breaks at 80 columns"


def test_help_prose_reflows_to_the_terminal_width() -> None:
    """A docstring's line breaks are not kept: at 200 columns each paragraph is one line."""
    for path, cmd in _commands():
        text = " ".join(_help(path, 200).split("\n"))
        lines = [" ".join(line.split()) for line in _help(path, 200).splitlines()]
        for paragraph in _prose(cmd.help or ""):
            if len(paragraph) < 190:
                assert paragraph in lines, f"`{path} --help` breaks {paragraph[:50]!r}..."
        assert text
    # a group's list of commands: each command's first paragraph, reflowed too
    listing = [" ".join(line.strip("│ ").split()) for line in _help("", 200).splitlines()]
    for path, cmd in _commands():
        if " " not in path:
            first = " ".join(inspect.cleandoc(cmd.help or "").split("\n\n")[0].split())
            assert any(line == f"{path} {first}" for line in listing), first


def test_long_option_lists_are_grouped_and_leave_room_for_the_help() -> None:
    for path, cmd in _commands():
        output = _help(path, 80)
        panels = output.count("╭─")
        options = sum(1 for p in cmd.params if p.opts and p.opts[0].startswith("-"))
        assert options <= 12 or panels >= 3, f"`{path} --help`: {options} options in one panel"
        for line in output.splitlines():
            line = line.rstrip().removesuffix("│").rstrip()
            if line.startswith("│ -") and "  " in line[3:]:
                start = line.index("  ", 3)
                while line[start] == " ":
                    start += 1
                assert start <= 40, f"`{path} --help`: the help starts at column {start}"
    assert len(_help("eval", 80).splitlines()) < 100


def test_every_command_help_has_exit_codes() -> None:
    for path, _ in _commands():
        result_output = _help(path, 80)
        assert "Exit code" in result_output, f"`{path} --help` does not give its exit codes"
        assert "<bool>" not in result_output and "<str>" not in result_output, path
        width = max(len(line) for line in result_output.splitlines())
        assert width <= 80, f"`{path} --help` is {width} columns wide"


def test_the_cli_reference_table_lists_every_command() -> None:
    """docs/cli.md says it covers every command: its table names each top-level command."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = [line for line in text.splitlines() if line.startswith("| `")]
    listed = {name for line in table for name in re.findall(r"`([a-z][a-z-]*)", line.split("|")[1])}
    for name in {path.split()[0] for path, _ in _commands()}:
        assert name in listed, f"docs/cli.md's command table does not list `{name}`"
