"""SQL over the store: ``run_sql`` (read-only unless asked), output formats, the prompt, and
the Parquet export.

The names below load on first use, so importing a light submodule (``format_names``) does not
pull in duckdb and pyarrow.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["OutputFormat", "ReadOnlyError", "SqlError", "emit", "run_sql"]
