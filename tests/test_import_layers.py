"""The import direction between tracereplay's subpackages (docs/ARCHITECTURE.md, "Layers"),
and no two modules of one package importing each other.

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


#: circles between two modules of one package in the areas other work is moving now (issue 51:
#: evaluate/replay/ becomes tracereplay/replay/, store/ is split): to be untied there, then
#: removed from this list. Any other circle fails the test below.
KNOWN_CIRCLES: set[tuple[str, str]] = set()


def _module_edges() -> dict[str, dict[str, str]]:
    """module -> tracereplay module it imports (every kind of import the walk sees) -> the
    first import site (``path:line``)."""
    edges: dict[str, dict[str, str]] = {}
    for path in _modules():
        module, _ = _module_name(path)
        for name, line in _imported(path):
            if name != module and _is_module(name):
                edges.setdefault(module, {}).setdefault(name, f"{path.relative_to(ROOT)}:{line}")
    return edges


def _sibling_circles() -> dict[tuple[str, str], tuple[str, str]]:
    """Pairs of modules of one package (files side by side; a package's ``__init__`` is not
    counted: it is the package's face, which its modules import each other through) that
    import each other, with an import site each way."""
    edges = _module_edges()
    packages = {_module_name(p)[0] for p in _modules() if p.name == "__init__.py"}
    circles = {}
    for a, targets in edges.items():
        for b, site in targets.items():
            if a >= b or a in packages or b in packages:
                continue
            if a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] and a in edges.get(b, {}):
                circles[(a, b)] = (site, edges[b][a])
    return circles


def test_no_import_circle_between_two_modules_of_one_package() -> None:
    circles = _sibling_circles()
    new = {pair: sites for pair, sites in circles.items() if pair not in KNOWN_CIRCLES}
    assert not new, (
        "modules of one package import each other (move what both need into a third module, "
        f"or have one hand the other what it needs): {new}"
    )
    gone = KNOWN_CIRCLES - set(circles)
    assert not gone, f"untied: remove them from KNOWN_CIRCLES: {sorted(gone)}"


def test_the_circle_check_sees_every_kind_of_import() -> None:
    """The check above would pass vacuously if its edges missed imports inside functions,
    under ``TYPE_CHECKING`` or given as strings: they are all there."""
    edges = _module_edges()
    # inside the command's function
    assert "tracereplay.evaluate.evaluation" in edges["tracereplay.cli.eval_cmd"]
    # under TYPE_CHECKING only
    assert "tracereplay.evaluate.evaluation" in edges["tracereplay.evaluate.formats.json"]
    # names for import_module: the registry names the built-in check modules, which register
    # through checks/kinds.py, not the registry (no circle)
    assert "tracereplay.checks.text" in edges["tracereplay.checks.registry"]
    assert "tracereplay.checks.registry" not in edges["tracereplay.checks.text"]


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
