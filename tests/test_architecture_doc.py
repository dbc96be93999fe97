"""docs/ARCHITECTURE.md's package layout table matches the code: every module it names exists,
and every module of ``tracereplay`` is in it (by its own row or its package's)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGE = ROOT / "tracereplay"


def _table_paths() -> set[str]:
    """The paths in the first column of the layout table, relative to the repository."""
    text = DOC.read_text()
    section = text.split("## Package layout", 1)[1].split("\n## ", 1)[0]
    paths = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for token in re.findall(r"`([^`]+)`", first):
            path = token if token.startswith("tracereplay/") else f"tracereplay/{token}"
            if "NNNN" in path or "*" in path:  # a pattern: its folder
                path = path.rsplit("/", 1)[0]
            paths.add(path.rstrip("/"))
    return paths


def _modules() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and p.name not in ("__init__.py", "__main__.py")
    )


def test_every_module_the_table_names_exists() -> None:
    paths = _table_paths()
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/ARCHITECTURE.md names modules that do not exist: {missing}"


def test_every_module_is_in_the_table() -> None:
    paths = _table_paths()

    def covered(module: str) -> bool:
        parts = module.split("/")
        return any("/".join(parts[:n]) in paths for n in range(2, len(parts) + 1))

    absent = [m for m in _modules() if not covered(m)]
    assert not absent, f"add these to the table in docs/ARCHITECTURE.md: {absent}"
