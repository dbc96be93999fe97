"""SQL over the store: ``run_sql`` (read-only unless asked), output formats, the prompt, and
the Parquet export.

The names below load on first use, so importing a light submodule (``format_names``) does not
pull in duckdb and pyarrow."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracereplay.query.execute import run_sql
    from tracereplay.query.format_names import OutputFormat
    from tracereplay.query.guard import ReadOnlyError, SqlError
    from tracereplay.query.output import emit

_LAZY = {
    "run_sql": "tracereplay.query.execute",
    "OutputFormat": "tracereplay.query.format_names",
    "ReadOnlyError": "tracereplay.query.guard",
    "SqlError": "tracereplay.query.guard",
    "emit": "tracereplay.query.output",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tracereplay.query' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["OutputFormat", "ReadOnlyError", "SqlError", "emit", "run_sql"]
