"""The quickstart pages (``docs/quickstart/<framework>.md``): which framework venv each runs
in, the distributions its ``pip install`` line names, the command as a reader runs it, and the
versions the page says it was last checked with."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from doc_blocks import Block, code_blocks
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
QUICKSTARTS = ROOT / "docs" / "quickstart"
#: page -> the framework venv it runs in
PAGES = {
    "pydantic-ai.md": "pydantic_ai",
    "openai-agents.md": "openai_agents",
    "langgraph.md": "langgraph",
    "crewai.md": "crewai",
    "llama-index.md": "llama_index",
    "openai-client.md": "plain_openai_v2",
}
#: ``Last checked with openai 3.57.0, opentelemetry-instrumentation-openai-v2 2.4b0.``
CHECKED = re.compile(r"^Last checked with (.+?)\.(?:\s|$)", re.M)


def _pip_installs(block: Block) -> list[list[str]]:
    out = []
    for line in block.body.splitlines():
        argv = shlex.split(line.removeprefix("$ "), comments=True)
        if argv[:2] == ["pip", "install"]:
            out.append(argv[2:])
    return out


def installed_names(block: Block) -> list[str]:
    """The distributions a ``pip install`` line installs (a path or wheel is tracereplay)."""
    names = []
    for args in _pip_installs(block):
        for arg in args:
            if arg.startswith("-"):
                continue
            local = arg.startswith(("/", ".")) or arg.endswith(".whl")
            names.append("tracereplay" if local else Requirement(arg).name)
    return names


def install_commands(page: str, tracereplay: Path = ROOT) -> list[list[str]]:
    """The page's ``pip install`` lines as a reader runs them (``pip install`` and the
    arguments), its path to tracereplay (``/path/to/tracereplay``) made ``tracereplay``."""
    commands = []
    for block in code_blocks(QUICKSTARTS / page):
        if block.lang != "sh":
            continue
        for args in _pip_installs(block):
            local = [str(tracereplay) if a.startswith("/path/to/") else a for a in args]
            commands.append(["pip", "install", *local])
    return commands


def page_names(page: str) -> list[str]:
    """Every distribution the page's ``pip install`` lines name, tracereplay first."""
    blocks = code_blocks(QUICKSTARTS / page)
    return [n for b in blocks if b.lang == "sh" for n in installed_names(b)]


def checked_versions(page: str) -> dict[str, str]:
    """The versions the page says it was last checked with (``Last checked with NAME VERSION,
    ...``), by distribution name."""
    match = CHECKED.search((QUICKSTARTS / page).read_text(encoding="utf-8"))
    if match is None:
        return {}
    pairs = [part.strip().rsplit(" ", 1) for part in match.group(1).split(",")]
    return {name: version for name, version in pairs}
