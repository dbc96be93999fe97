"""docs/python-api.md draws the public/internal line: it lists every name each public module
exports (its ``__all__``) and nothing else, every other package says it is internal, and the
page's example runs."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tracereplay

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
PUBLIC = ("tracereplay", "tracereplay.models", "tracereplay.sdk", "tracereplay.checks",
          "tracereplay.evaluate", "tracereplay.pytest_plugin")  # fmt: skip


def _documented(module: str) -> list[str]:
    section = re.search(rf"^## `{re.escape(module)}`\n(.*?)(?=^## |\Z)", PAGE, re.S | re.M)
    assert section, f"docs/python-api.md has no section for {module}"
    return re.findall(r"^\| `([^`]+)` \|", section.group(1), re.M)


@pytest.mark.parametrize("module", PUBLIC)
def test_every_exported_name_is_documented_and_nothing_else(module: str) -> None:
    mod = importlib.import_module(module)
    documented = _documented(module)
    assert sorted(documented) == sorted(mod.__all__)
    for name in documented:
        assert getattr(mod, name) is not None


def test_every_other_package_says_it_is_internal() -> None:
    for info in pkgutil.iter_modules(tracereplay.__path__, "tracereplay."):
        if not info.ispkg or info.name in PUBLIC:
            continue
        doc = importlib.import_module(info.name).__doc__ or ""
        assert "Internal: not a public API" in doc, info.name
        assert f"`{info.name}`" in PAGE, f"{info.name} missing from the page"


def test_the_example_runs(tmp_path: Path) -> None:
    [code] = re.findall(r"^```python\n(.*?)^```", PAGE, re.S | re.M)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["success", "recorded"]
