"""The import direction between tracereplay's subpackages (docs/ARCHITECTURE.md, "Layers").

Every import counts: top level, inside functions, under ``TYPE_CHECKING``, and module names given
as strings (what ``importlib.import_module`` and the ``lazy_getattr`` maps of ``__init__``s get).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tracereplay"


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _imported(path: Path) -> Iterator[tuple[str, int]]:
    """Every ``tracereplay.*`` module name ``path`` imports, with its line: import statements,
    and strings that are exactly a tracereplay module's name (what ``import_module`` is given)."""
    module, is_package = _module_name(path)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1]
                names = [".".join([*base, *([node.module] if node.module else [])])]
            else:
                names = [node.module or ""]
            # ``from tracereplay import evaluate`` imports the subpackage
            names += [f"{names[0]}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if _is_module(node.value) else []
        else:
            continue
        for name in names:
            if name.startswith("tracereplay."):
                yield name, node.lineno


def _subpackage(module: str) -> str:
    """``tracereplay.scoring.runner`` -> ``evaluate``; top-level modules are their own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _modules(under: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in under.rglob("*.py") if "__pycache__" not in p.parts)


def _is_module(name: str) -> bool:
    """``name`` is a module or package of tracereplay (not a name inside one)."""
    if not re.fullmatch(r"tracereplay(\.\w+)+", name):
        return False
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _edges() -> dict[str, dict[str, list[str]]]:
    """subpackage -> subpackage it imports -> the import sites (``path:line``)."""
    edges: dict[str, dict[str, list[str]]] = {}
    for path in _modules():
        source = _subpackage(_module_name(path)[0])
        if not source:  # tracereplay/__init__.py: importing any subpackage runs it anyway
            continue
        for name, line in _imported(path):
            target = _subpackage(name)
            if target and target != source and _is_module(f"tracereplay.{target}"):
                sites = edges.setdefault(source, {}).setdefault(target, [])
                site = f"{path.relative_to(ROOT)}:{line}"
                if site not in sites:
                    sites.append(site)
    return edges


def _imports_of(subpackage: str, forbidden: str) -> list[str]:
    return _edges().get(subpackage, {}).get(forbidden, [])


def test_promote_does_not_import_evaluate() -> None:
    sites = _imports_of("promote", "evaluate")
    assert not sites, (
        "tracereplay.promote must not import tracereplay.evaluate (both build on "
        f"tracereplay.checks, tracereplay.store.suites, tracereplay.models): {sites}"
    )


def test_evaluate_does_not_import_promote() -> None:
    sites = _imports_of("evaluate", "promote")
    assert not sites, (
        "tracereplay.evaluate must not import tracereplay.promote (suites and cases are read "
        f"through tracereplay.store.suites, parameters from tracereplay.models): {sites}"
    )


def test_no_import_cycle_between_subpackages() -> None:
    edges = _edges()
    cycles: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        for target in sorted(edges.get(node, {})):
            if target == path[0]:
                cycles.append([*path, target])
            elif target not in path and target > path[0]:  # each cycle once, from its least node
                walk(target, [*path, target])

    for start in sorted(edges):
        walk(start, [start])
    described = [
        " -> ".join(cycle)
        + " ("
        + "; ".join(edges[a][b][0] for a, b in zip(cycle, cycle[1:]))
        + ")"
        for cycle in cycles
    ]
    assert not cycles, f"import cycles between tracereplay subpackages: {described}"


def test_the_walk_sees_function_level_and_string_imports(tmp_path: Path) -> None:
    """The rules above would pass vacuously if the walk missed imports: it does not."""
    sites = {
        name
        for path in _modules(PACKAGE / "checks")
        for name, _ in _imported(path)
        if path.name == "registry.py"
    }
    assert "tracereplay.checks.text" in sites  # in BUILTIN_MODULES, for import_module
    lazy = {name for name, _ in _imported(PACKAGE / "__init__.py")}
    assert "tracereplay.sdk" in lazy and "tracereplay.checks.registry" in lazy
    cli = _edges()["cli"]
    assert "evaluate" in cli and "promote" in cli  # cli imports them inside its commands
