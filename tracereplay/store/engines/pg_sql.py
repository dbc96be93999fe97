"""The commands' SQL (written once, in DuckDB's dialect) as PostgreSQL runs it, by ``sqlglot``.

``sqlglot`` parses the statement as DuckDB's and writes it as PostgreSQL's (``DOUBLE`` as
``DOUBLE PRECISION``, ``quantile_cont(x, p)`` as ``percentile_cont(p) WITHIN GROUP (ORDER BY
x)``, ``?`` as psycopg's ``%s``, ``$name`` as ``%(name)s``...). What it cannot know of this
store is one rule each, applied to the parsed statement (``_rule``):

- ``unnest(?)`` of a Python list becomes ``unnest(CAST(%s AS text[]))`` and ``CAST(? AS
  VARCHAR[])`` becomes ``CAST(%s AS text[])``: psycopg sends a list of strings untyped, and
  PostgreSQL cannot pick an ``unnest`` for it; ``text[]``, not ``varchar[]``, is what the
  schema's list functions take (write ``CAST(? AS VARCHAR[])``: sqlglot does not parse
  ``?::VARCHAR[]``);
- ``arg_max(v, k)`` / ``arg_min(v, k)`` (with an optional ``FILTER``) become the first element
  of ``array_agg(v ORDER BY k ...)`` (PostgreSQL has no ``arg_max``);
- ``x ->> 'a.b'`` stays the key ``'a.b'`` (``_Duck.to_json_path``): span attributes' names
  hold dots;
- ``CAST(col AS VARCHAR[])`` of a column (``runs.models``, JSON text on PostgreSQL) becomes
  ``json_text_array(col)``; ``coalesce(x, [])`` becomes ``coalesce(x, ARRAY[]::text[])``.

Functions PostgreSQL lacks under DuckDB's name (``any_value``, ``make_timestamptz(µs)``,
``epoch``, ``list``, ``list_contains``, ``list_has_any``, ``contains``) are created by the
PostgreSQL schema (``migrations/postgres/``): they are read as plain calls (``_Duck``), never
translated (sqlglot would spell ``list_contains(l, ?)`` with its parameter twice, shifting
every ``%s`` after it). With parameters, a literal ``%`` becomes ``%%`` (psycopg's escape).

Each distinct statement is translated once (``lru_cache``): the store sends the same few
hundred statements again and again, and a translation costs far more than a cache lookup
(sqlglot itself is imported once per process, and only for a server store). User SQL (``tracereplay sql``) is sent as written; a
``--where`` predicate goes through these rules inside the command's own query, and
one sqlglot cannot parse is a ``SqlSyntaxError``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tracereplay.errors import one_line
from tracereplay.extras import require_extra
from tracereplay.store.errors import SqlSyntaxError

#: DuckDB's names of the functions the PostgreSQL schema defines (see the module docstring)
SCHEMA_FUNCTIONS = frozenset(
    {"ANY_VALUE", "MAKE_TIMESTAMPTZ", "EPOCH", "LIST", "LIST_CONTAINS", "LIST_HAS_ANY", "CONTAINS"}
)
#: a parameter while the statement is written out: a character no statement holds, so the
#: ``%`` doubling that follows cannot touch the parameters themselves
_MARK = "\x00"


@lru_cache(maxsize=1)
def _dialects() -> tuple[Any, Any]:
    """The store's DuckDB dialect (the schema's functions read as plain calls) and
    PostgreSQL's whose parameters come out as ``_MARK`` + name + ``_MARK``; built on first
    use: a DuckDB store never imports sqlglot."""
    require_extra("postgres", ["sqlglot"], "a PostgreSQL store")
    from sqlglot import exp
    from sqlglot.dialects.duckdb import DuckDB
    from sqlglot.dialects.postgres import Postgres

    class _Duck(DuckDB):
        def to_json_path(self, path: exp.Expr | None) -> exp.Expr | None:
            """``->> 'gen_ai.tool.name'``: DuckDB reads a string that starts with neither
            ``$`` nor ``/`` as one key, dots and all (sqlglot would split it into a path);
            left a string, it is written as PostgreSQL's ``->>`` of that key."""
            key = isinstance(path, exp.Literal) and path.is_string
            if key and not path.name.startswith(("$", "/")):  # type: ignore[union-attr]
                return path
            return super().to_json_path(path)

        class Parser(DuckDB.Parser):
            FUNCTIONS = {
                k: v for k, v in DuckDB.Parser.FUNCTIONS.items() if k not in SCHEMA_FUNCTIONS
            }

    class _Pg(Postgres):
        class Generator(Postgres.Generator):
            def placeholder_sql(self, expression: exp.Placeholder) -> str:
                name = expression.this if isinstance(expression.this, str) else ""
                return f"{_MARK}{name}{_MARK}"

    return _Duck, _Pg


@lru_cache(maxsize=2048)
def to_postgres(sql: str, marks: bool = True) -> str:
    """``sql`` (the store's DuckDB dialect) as PostgreSQL runs it; with ``marks`` (the
    statement has parameters), its ``?`` as psycopg's ``%s``, ``$name`` as ``%(name)s`` and
    ``%`` as ``%%`` (without parameters psycopg sends the text as it is)."""
    duck, pg = _dialects()
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    try:
        statements = sqlglot.parse(sql, read=duck)
    except ParseError as exc:  # a --where predicate: one line, as PostgreSQL's own would be
        first = exc.errors[0] if exc.errors else {}
        where = f" (line {first.get('line')}, column {first.get('col')})" if first else ""
        raise SqlSyntaxError(f"{first.get('description') or one_line(exc)}{where}") from None
    except TokenError as exc:
        raise SqlSyntaxError(one_line(exc)) from None
    text = "; ".join(s.transform(_rule).sql(dialect=pg) for s in statements if s is not None)
    if marks:
        text = text.replace("%", "%%")
    pieces = text.split(_MARK)  # text, name, text, name, ..., text
    for i in range(1, len(pieces), 2):
        pieces[i] = f"%({pieces[i]})s" if pieces[i] else "%s"
    return "".join(pieces)


def _rule(node: Any) -> Any:
    """The node as this store's PostgreSQL schema needs it (see the module docstring)."""
    from sqlglot import exp

    if isinstance(node, exp.Explode) and isinstance(node.this, exp.Placeholder):
        return exp.Explode(this=_text_array(node.this))
    if isinstance(node, exp.Cast) and _is_text_array(node.to):
        if isinstance(node.this, exp.Placeholder):
            return _text_array(node.this)
        if isinstance(node.this, exp.Column):
            return exp.Anonymous(this="json_text_array", expressions=[node.this.copy()])
    if isinstance(node, exp.Coalesce):
        empty = [e for e in node.expressions if isinstance(e, exp.Array) and not e.expressions]
        for e in empty:
            e.replace(exp.cast(exp.Array(expressions=[]), _text_array_type()))
        return node
    extreme, where = node, None
    if isinstance(node, exp.Filter):
        extreme, where = node.this, node.expression
    if isinstance(extreme, (exp.ArgMax, exp.ArgMin)):
        order = exp.Ordered(
            this=extreme.expression.transform(_rule),
            desc=isinstance(extreme, exp.ArgMax),
            nulls_first=False,
        )
        agg: exp.Expression = exp.ArrayAgg(
            this=exp.Order(this=extreme.this.transform(_rule), expressions=[order])
        )
        if where is not None:
            agg = exp.Filter(this=agg, expression=where.transform(_rule))
        first = exp.Literal.number(1)  # ``offset``: written 1-based, as PostgreSQL counts
        return exp.Bracket(this=exp.Paren(this=agg), expressions=[first], offset=1)
    return node


def _text_array_type() -> Any:
    from sqlglot import exp

    return exp.DataType.build("text[]", dialect="postgres")


def _text_array(value: Any) -> Any:
    from sqlglot import exp

    return exp.cast(value.copy(), _text_array_type())


def _is_text_array(to: Any) -> bool:
    from sqlglot import exp

    return (
        to.is_type(exp.DataType.Type.ARRAY)
        and len(to.expressions) == 1
        and to.expressions[0].is_type(*exp.DataType.TEXT_TYPES)
    )
