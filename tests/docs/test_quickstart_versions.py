"""Each quickstart says the versions it was last checked with, and they are the versions of
the pinned venv ``make test`` runs it in: every distribution its ``pip install`` line names
(tracereplay aside), at the version that venv has."""

from __future__ import annotations

import subprocess

import pytest
from docs.quickstart_pages import PAGES, ROOT, checked_versions, install_commands, page_names
from evaluate.framework_replay import framework_bin


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_names_the_versions_make_test_checks(page: str) -> None:
    said = checked_versions(page)
    names = [n for n in page_names(page) if n != "tracereplay"]
    assert sorted(said) == sorted(names), f"{page}: 'Last checked with' names {sorted(said)}"
    python = framework_bin(PAGES[page], "python")
    code = "import importlib.metadata as m, sys; print(*(m.version(n) for n in sys.argv[1:]))"
    found = subprocess.run(
        [str(python), "-c", code, *names], capture_output=True, text=True, check=True
    ).stdout.split()
    assert dict(zip(names, found)) == said, f"{page}: the pinned venv has other versions"


def test_the_install_line_runs_as_a_reader_types_it() -> None:
    """The path to tracereplay is the checkout; every other argument is the page's own."""
    [command] = install_commands("openai-client.md")
    assert command[:3] == ["pip", "install", str(ROOT)]
    assert command[3:] == [
        "openai", "opentelemetry-instrumentation-openai-v2", "httpx",
        "opentelemetry-util-genai==1.1b0",
    ]  # fmt: skip
