"""``make test-latest``'s quickstart lane: each quickstart's ``pip install`` line run as written.

``make test`` runs every quickstart in its framework's pinned venv, so a page whose install
line no longer works with today's releases (a new ``openai`` that drops a dependency an
instrumentation imports) still passes there. For each page this script

1. makes a fresh venv ``.venvs-latest/quickstarts/<framework>`` and runs the page's
   ``pip install`` line in it as a reader types it (the path to tracereplay is this checkout),
   then ``pip check``;
2. runs the page's test (``tests/docs/test_quickstarts.py``) with that venv
   (``TRACEREPLAY_VENVS``): its agent recorded, promoted, replayed, the change caught;

and prints one line per page: the versions pip resolved that differ from the ones the page
says it was last checked with, and what failed.

    .venv/bin/python tests/docs/quickstarts_latest.py [PAGE ...]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]  # tests/: doc_blocks, docs

from docs.quickstart_pages import PAGES, ROOT, checked_versions, install_commands  # noqa: E402

VENVS = ROOT / ".venvs-latest" / "quickstarts"


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        cmd, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=3600,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _last_error(text: str) -> str:
    lines = [ln for ln in text.splitlines() if "Error" in ln or "ERROR" in ln]
    return (lines[-1:] or text.strip().splitlines()[-1:] or ["?"])[0].strip()


def check_page(page: str) -> tuple[bool, str]:
    """Install the page's line in a fresh venv and run its test there: (passed, one line)."""
    venv = VENVS / PAGES[page]
    shutil.rmtree(venv, ignore_errors=True)
    code, text = _run([sys.executable, "-m", "venv", str(venv)])
    if code:
        return False, f"venv: {_last_error(text)}"
    python = str(venv / "bin" / "python")
    for command in install_commands(page):
        code, text = _run([python, "-m", *command])
        if code:
            return False, f"{' '.join(command)}: {_last_error(text)}"
    code, text = _run([python, "-m", "pip", "check"])
    if code:
        return False, f"pip check: {_last_error(text)}"
    said = checked_versions(page)
    names = list(said)
    code, text = _run(
        [python, "-c", "import importlib.metadata as m, sys; print(*(m.version(n) for n in "
         "sys.argv[1:]))", *names]
    )  # fmt: skip
    now = dict(zip(names, text.split())) if code == 0 else {}
    drift = [f"{n} {said[n]} -> {now[n]}" for n in names if now.get(n) not in (None, said[n])]
    code, text = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/docs/test_quickstarts.py", "-k", page],
        env={"TRACEREPLAY_VENVS": str(VENVS)},
    )  # fmt: skip
    summary = [ln for ln in text.splitlines() if re.search(r"\d+ (passed|failed|error)", ln)]
    outcome = summary[-1].strip("= ") if summary else _last_error(text)
    passed = code == 0
    if not passed:
        failure = [ln for ln in text.splitlines() if ln.startswith("E ")][:1]
        outcome += f": {failure[0][2:].strip()}" if failure else ""
    return passed, f"{', '.join(drift) or 'no drift'}; {outcome}"


def main(pages: list[str]) -> int:
    chosen = pages or sorted(PAGES)
    unknown = [p for p in chosen if p not in PAGES]
    if unknown:
        print(f"no quickstart {unknown[0]}: pick from {', '.join(sorted(PAGES))}", file=sys.stderr)
        return 2
    failed = 0
    for page in chosen:
        passed, line = check_page(page)
        failed += not passed
        print(f"{page}: {line}", flush=True)
    print(f"{len(chosen) - failed} of {len(chosen)} quickstarts pass as written today")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
