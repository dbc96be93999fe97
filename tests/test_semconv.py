"""Span attribute names live in one place (``tracereplay.semconv``), taken from the installed
``opentelemetry-semantic-conventions`` where it defines them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from opentelemetry.semconv.attributes import error_attributes, exception_attributes

from tracereplay import semconv
from tracereplay.sdk import attributes as sdk_attributes

PACKAGE = Path(semconv.__file__).parent


def _gen_ai_module():
    try:
        from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
    except ImportError:  # the GenAI names left the package: the fallbacks stand alone
        return None
    return gen_ai_attributes


def _names() -> dict[str, str]:
    return {k: v for k, v in vars(semconv).items() if k.isupper() and isinstance(v, str)}


def test_otel_names_are_the_installed_semantic_conventions() -> None:
    gen_ai = _gen_ai_module()
    checked = 0
    for name, value in _names().items():
        for module in (gen_ai, error_attributes, exception_attributes):
            official = getattr(module, name, None)
            if isinstance(official, str):
                assert value == official, name
                checked += 1
    # the stable ones always; the GenAI ones while the package still defines them
    assert checked >= (30 if gen_ai is not None else 5)


def test_a_name_the_conventions_no_longer_define_falls_back() -> None:
    assert semconv._name(None, "GEN_AI_AGENT_NAME", "gen_ai.agent.name") == "gen_ai.agent.name"
    assert semconv._name(error_attributes, "NOT_THERE", "x.y") == "x.y"
    assert semconv._name(error_attributes, "ERROR_TYPE", "x.y") == "error.type"


def test_the_sdk_writes_the_names_the_converter_reads() -> None:
    values = set(_names().values())
    for name, value in vars(sdk_attributes).items():
        if name.isupper():
            assert value in values, name


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants in ``path``'s code (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


@pytest.mark.parametrize(
    "path",
    sorted([*PACKAGE.glob("convert/*.py"), *PACKAGE.glob("sdk/*.py")]),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_no_attribute_name_is_spelled_out_elsewhere(path: Path) -> None:
    dotted = {v for v in _names().values() if "." in v}
    spelled = [(line, s) for line, s in _code_strings(path) if s in dotted]
    assert not spelled, f"use the tracereplay.semconv constants: {spelled}"
