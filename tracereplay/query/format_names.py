"""The output format names of ``tracereplay sql``, importable without duckdb or pyarrow."""

from __future__ import annotations

from enum import Enum


class OutputFormat(str, Enum):
    """Output formats of ``tracereplay sql``."""

    table = "table"
    csv = "csv"
    json = "json"
    jsonl = "jsonl"
    parquet = "parquet"
