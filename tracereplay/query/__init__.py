"""SQL over the store: ``run_sql`` (read-only unless asked), output formats, the prompt, and
the Parquet export."""

from tracereplay.query.execute import run_sql
from tracereplay.query.formats import OutputFormat
from tracereplay.query.guard import ReadOnlyError, SqlError
from tracereplay.query.output import emit

__all__ = ["OutputFormat", "ReadOnlyError", "SqlError", "emit", "run_sql"]
