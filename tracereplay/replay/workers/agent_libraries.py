"""The installed libraries an agent's code imports, found by reading its source, not running it.

Every agent process imports the agent's framework (0.9-1.3 s of CPU for pydantic-ai, LangGraph
or the OpenAI Agents SDK); a second process imports it again. The fork server can import it
once for them all (``library_preload``), but only what is known before the agent is loaded, and
the agent's own module must not run there (it reads the environment and may start tracing at
import). So this reads the source instead: the ``--agent`` module's file and the project modules
it imports (found with ``PathFinder``, which imports no parent package), collecting the modules
they import from installed distributions (site-packages): third-party code only, never the
project's own, the standard library or tracereplay. Nothing is imported here.
"""

from __future__ import annotations

import ast
import os
import site
import sys
from collections import deque
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, ModuleSpec, PathFinder
from pathlib import Path

__all__ = ["agent_libraries"]

#: project files read at most (an agent's imports, theirs, and so on)
MAX_FILES = 100


def agent_libraries(spec: str, cwd: str | None = None) -> list[str]:
    """The installed modules the code of ``--agent spec`` (``module:attr``) imports, in the
    order first seen; empty when its module cannot be found or read."""
    module_name = spec.strip().partition(":")[0]
    if not module_name or module_name.startswith("."):
        return []
    path = [cwd or os.getcwd(), *(p or os.getcwd() for p in sys.path)]
    sites = _site_dirs()
    found: dict[str, None] = {}
    seen = {module_name}
    todo = deque([module_name])
    files = 0
    while todo and files < MAX_FILES:
        name = todo.popleft()
        origin = _find(name, path)
        if not origin or not origin.endswith(".py") or _installed(origin, sites):
            continue
        files += 1
        package = name if origin.endswith("__init__.py") else name.rpartition(".")[0]
        tree = _parse(Path(origin))
        if tree is not None and _sets_environment(tree):
            return []  # a library it imports next may read what it sets: nothing is preloaded
        for imported in _imports(tree, package):
            top = imported.partition(".")[0]
            if top in sys.stdlib_module_names or top == "tracereplay" or imported in seen:
                continue
            seen.add(imported)
            location = _find(top, path)
            if location is None:
                continue
            if _installed(location, sites):
                if imported == top or _find(imported, path) is not None:
                    found[imported] = None
            else:
                todo.append(imported)
    return list(found)


def _parse(file: Path) -> ast.Module | None:
    try:
        return ast.parse(file.read_bytes(), str(file))
    except (OSError, SyntaxError, ValueError):
        return None


#: calls that change the environment (``os.putenv``, python-dotenv's ``load_dotenv``, and
#: ``os.environ``'s own methods)
_ENV_CALLS = {"putenv", "unsetenv", "load_dotenv"}
_ENVIRON_METHODS = {"update", "setdefault", "pop", "clear", "__setitem__", "__delitem__"}


def _sets_environment(tree: ast.Module) -> bool:
    """Whether the module changes the environment as it is imported (outside functions and
    classes: ``os.environ[...] = ...``, ``os.environ.update(...)``, ``load_dotenv()``...). The
    libraries it imports after that may read it at their import, which the fork server, as
    the eval began, would not see."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stored = isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del)
        if stored and _is_environ(node.value):  # type: ignore[attr-defined]
            return True
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            method = isinstance(func, ast.Attribute) and called in _ENVIRON_METHODS
            if called in _ENV_CALLS or (method and _is_environ(func.value)):  # type: ignore[attr-defined]
                return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or ``environ``."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "environ"


def _imports(tree: ast.Module | None, package: str) -> list[str]:
    """The absolute names of the modules ``tree`` imports (relative imports resolved against
    ``package``); ``from x import y`` names ``x`` and ``x.y`` (which may be a name in ``x``,
    not a module: the caller's lookup tells)."""
    if tree is None:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                module = node.module
            elif node.level:
                base = package.split(".") if package else []
                if node.level - 1 > len(base):
                    continue
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                continue
            if module:
                names.append(module)
            # ``from package import submodule``: the submodule, when it is one (_find says)
            names.extend(f"{module}.{a.name}" if module else a.name for a in node.names)
    return [n for n in names if n]


def _find(name: str, path: list[str]) -> str | None:
    """Where module ``name`` is on ``path`` (its file, or a namespace package's first folder),
    found without importing any package of it (``PathFinder`` would need a namespace
    package's parent imported to look inside it, so below the top level the folders are read
    directly)."""
    parts = name.split(".")
    try:
        top = PathFinder.find_spec(parts[0], path)
    except (ImportError, OSError, ValueError):
        return None
    if top is None:
        return None
    found = _location(top)
    folders = list(top.submodule_search_locations or [])
    for part in parts[1:]:
        found, folders = _find_in(part, folders)
        if found is None:
            return None
    return found


def _find_in(part: str, folders: list[str]) -> tuple[str | None, list[str]]:
    """Submodule ``part`` of a package whose folders are ``folders``: where it is, and its own
    folders when it is a package."""
    portions = []
    for folder in folders:
        package = os.path.join(folder, part)
        init = os.path.join(package, "__init__.py")
        if os.path.isfile(init):
            return init, [package]
        for suffix in SOURCE_SUFFIXES + EXTENSION_SUFFIXES:
            if os.path.isfile(package + suffix):
                return package + suffix, []
        if os.path.isdir(package):
            portions.append(package)
    return (portions[0], portions) if portions else (None, [])


def _location(spec: ModuleSpec) -> str | None:
    """Where a module's file or (namespace) package's first folder is."""
    if spec.origin and spec.origin not in ("built-in", "frozen", "namespace"):
        return spec.origin
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def _site_dirs() -> tuple[str, ...]:
    """The folders installed distributions are in."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs if d)


def _installed(location: str, sites: tuple[str, ...]) -> bool:
    """Whether ``location`` lies in an installed distribution's folder."""
    real = os.path.realpath(location)
    return real.startswith(sites) or any(
        part in ("site-packages", "dist-packages") for part in Path(real).parts
    )
