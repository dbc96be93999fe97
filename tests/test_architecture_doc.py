"""docs/ARCHITECTURE.md's package layout tables match the code: every module they name exists,
every module of ``tracereplay`` is in them (by its own row or its package's), and a package's
row names each of its modules."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGE = ROOT / "tracereplay"


def _rows() -> list[tuple[set[str], str]]:
    """Each row of the layout tables: the paths of its first column (relative to the
    repository; a ``*`` pattern stands for the modules it matches, ``NNNN`` for its folder)
    and the text of its second column."""
    text = DOC.read_text()
    section = text.split("## Package layout", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split("|")
        paths = set()
        for token in re.findall(r"`([^`]+)`", cells[1]):
            path = token if token.startswith("tracereplay/") else f"tracereplay/{token}"
            if "*" in path:
                paths |= {p.relative_to(ROOT).as_posix() for p in ROOT.glob(path)} or {path}
            elif "NNNN" in path:
                paths.add(path.rsplit("/", 1)[0])
            else:
                paths.add(path.rstrip("/"))
        rows.append((paths, "|".join(cells[2:])))
    return rows


def _table_paths() -> set[str]:
    return {path for paths, _ in _rows() for path in paths}


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


def test_a_package_row_names_each_of_its_modules() -> None:
    """A package's row (``sdk/``) names each module directly in it (`` `config` ``) and each
    subpackage (`` `queries/` ``) that has no row of its own."""
    paths = _table_paths()
    unnamed = []
    for row_paths, text in _rows():
        named = set(re.findall(r"`([^`]+)`", text))
        for path in row_paths:
            folder = ROOT / path
            if not folder.is_dir():
                continue
            for child in sorted(folder.iterdir()):
                rel = child.relative_to(ROOT).as_posix()
                module = child.suffix == ".py" and child.name not in ("__init__.py", "__main__.py")
                package = (child / "__init__.py").exists() and rel not in paths
                if (module and child.stem not in named) or (
                    package and f"{child.name}/" not in named
                ):
                    unnamed.append(rel)
    assert not unnamed, f"name these in their package's row of docs/ARCHITECTURE.md: {unnamed}"
