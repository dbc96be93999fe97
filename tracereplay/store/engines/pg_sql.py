"""The commands' SQL (written once, in DuckDB's dialect) as PostgreSQL runs it.

The store's own queries use a small, fixed set of forms PostgreSQL spells differently; each is
one rule here, applied once per distinct statement (cached):

- ``?`` parameters become psycopg's ``%s`` (and a literal ``%`` becomes ``%%``);
- ``unnest(?)`` of a Python list becomes ``unnest(CAST(%s AS text[]))`` (psycopg sends a list
  of strings untyped, and PostgreSQL cannot pick an ``unnest`` for it);
- ``arg_max(v, k)`` / ``arg_min(v, k)`` (with an optional ``FILTER``) become the first element
  of ``array_agg(v ORDER BY k ...)``; ``quantile_cont(x, p)`` becomes ``percentile_cont(p)
  WITHIN GROUP (ORDER BY x)``; ``DOUBLE`` as a type becomes ``DOUBLE PRECISION``;
- ``CAST(col AS VARCHAR[])`` of a JSON array column (``runs.models``) becomes
  ``json_text_array(col)``; ``coalesce(x, [])`` becomes ``coalesce(x, ARRAY[]::text[])``;
  ``?::VARCHAR[]`` becomes ``CAST(%s AS text[])``.

Functions PostgreSQL lacks under DuckDB's name (``any_value``, ``make_timestamptz(µs)``,
``epoch``, ``list``, ``list_contains``, ``list_has_any``, ``contains``) are created by the PostgreSQL schema
(``migrations/postgres/``), not rewritten. User SQL (``tracereplay sql``, ``--where``) is the
user's: ``tracereplay sql`` sends it as written; a ``--where`` predicate goes through these
rules inside the command's own query.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\?|%")
_ARG = r"([\w.]+(?:\([\w.]*\))?)"
_FILTER = r"(\s+FILTER\s*\((?:[^()]|\([^()]*\))*\))?"
_ARG_MAX = re.compile(rf"\barg_(max|min)\(\s*{_ARG}\s*,\s*{_ARG}\s*\){_FILTER}", re.I)
_QUANTILE = re.compile(rf"\bquantile_cont\(\s*{_ARG}\s*,\s*([\d.]+)\s*\)", re.I)
_UNNEST = re.compile(r"\bunnest\(\s*\?\s*\)", re.I)
_LIST_PARAM = re.compile(r"\?\s*::\s*VARCHAR\[\]", re.I)
_JSON_LIST = re.compile(r"\bCAST\(\s*([\w.]+)\s+AS\s+VARCHAR\[\]\s*\)", re.I)
_EMPTY_LIST = re.compile(r"\bcoalesce\(\s*([\w.]+)\s*,\s*\[\]\s*\)", re.I)
_DOUBLE = re.compile(r"\b(AS|::)\s*DOUBLE\b(?!\s+PRECISION)", re.I)


def _arg_extreme(m: re.Match[str]) -> str:
    order = "DESC" if m.group(1).lower() == "max" else "ASC"
    return (
        f"(array_agg({m.group(2)} ORDER BY {m.group(3)} {order} NULLS LAST){m.group(4) or ''})[1]"
    )


def _marks(sql: str) -> str:
    def one(m: re.Match[str]) -> str:
        text = m.group(0)
        if text == "?":
            return "%s"
        return text.replace("%", "%%")

    return _TOKENS.sub(one, sql)


@lru_cache(maxsize=2048)
def to_postgres(sql: str, marks: bool = True) -> str:
    """``sql`` (the store's DuckDB dialect) as PostgreSQL runs it; with ``marks`` (the
    statement has parameters), its ``?`` as psycopg's ``%s`` and ``%`` as ``%%`` (without
    parameters psycopg sends the text as it is)."""
    sql = _UNNEST.sub("unnest(CAST(? AS text[]))", sql)
    sql = _LIST_PARAM.sub("CAST(? AS text[])", sql)
    sql = _JSON_LIST.sub(r"json_text_array(\1)", sql)
    sql = _EMPTY_LIST.sub(r"coalesce(\1, ARRAY[]::text[])", sql)
    sql = _ARG_MAX.sub(_arg_extreme, sql)
    sql = _QUANTILE.sub(
        lambda m: f"percentile_cont({m.group(2)}) WITHIN GROUP (ORDER BY {m.group(1)})", sql
    )
    sql = _DOUBLE.sub(lambda m: f"{m.group(1)} DOUBLE PRECISION", sql)
    return _marks(sql) if marks else sql
