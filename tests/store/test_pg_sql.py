"""The store's DuckDB SQL as PostgreSQL runs it (``store/engines/pg_sql.py``): each rule the
schema needs on top of sqlglot's translation, on the statements' own forms. That PostgreSQL
runs them is what the PostgreSQL tests (``tests/ui/test_ui_postgres.py``...) show."""

from __future__ import annotations

import pytest

from tracereplay.store.engines.pg_sql import to_postgres
from tracereplay.store.errors import SqlSyntaxError


def test_parameters_become_psycopgs_and_a_literal_percent_is_doubled() -> None:
    assert to_postgres("SELECT a FROM t WHERE b LIKE '%x' AND c = ? AND d % 2 = 0") == (
        "SELECT a FROM t WHERE b LIKE '%%x' AND c = %s AND d %% 2 = 0"
    )
    # without parameters psycopg sends the text as it is: nothing doubled
    assert to_postgres("SELECT a FROM t WHERE b LIKE '%x'", False) == (
        "SELECT a FROM t WHERE b LIKE '%x'"
    )
    assert to_postgres("DELETE FROM runs WHERE started_at < $cutoff") == (
        "DELETE FROM runs WHERE started_at < %(cutoff)s"
    )


def test_a_list_parameter_is_typed_text_array() -> None:
    assert to_postgres("SELECT x FROM t WHERE id IN (SELECT unnest(?))") == (
        "SELECT x FROM t WHERE id IN (SELECT UNNEST(CAST(%s AS TEXT[])))"
    )
    assert to_postgres("SELECT list_contains(CAST(? AS VARCHAR[]), kind) FROM runs") == (
        "SELECT LIST_CONTAINS(CAST(%s AS TEXT[]), kind) FROM runs"
    )


def test_the_schemas_functions_keep_duckdbs_names_and_their_parameters() -> None:
    """sqlglot would write ``list_contains(l, ?)`` with its parameter twice: every later
    ``%s`` would get the wrong value."""
    sql = (
        "SELECT list_contains(models, ?), list_has_any(a, b), epoch(started_at), any_value(x),"
        " list(x), contains(a, ?), make_timestamptz(?) FROM runs"
    )
    assert to_postgres(sql) == (
        "SELECT LIST_CONTAINS(models, %s), LIST_HAS_ANY(a, b), EPOCH(started_at),"
        " ANY_VALUE(x), LIST(x), CONTAINS(a, %s), MAKE_TIMESTAMPTZ(%s) FROM runs"
    )


def test_arg_max_and_quantiles_become_postgresqls_aggregates() -> None:
    assert to_postgres(
        "SELECT arg_max(reason, judged_at) FILTER (WHERE status = 'FAILED'),"
        " arg_min(v, k), quantile_cont(duration_ms, 0.95) FROM t",
        False,
    ) == (
        "SELECT (ARRAY_AGG(reason ORDER BY judged_at DESC NULLS LAST)"
        " FILTER(WHERE status = 'FAILED'))[1], (ARRAY_AGG(v ORDER BY k ASC))[1],"
        " PERCENTILE_CONT(0.95) WITHIN GROUP (ORDER BY duration_ms) FROM t"
    )


def test_json_arrays_and_empty_lists() -> None:
    assert to_postgres(
        "SELECT coalesce(CAST(r.models AS VARCHAR[]), []), CAST(x AS DOUBLE) FROM runs AS r",
        False,
    ) == (
        "SELECT COALESCE(JSON_TEXT_ARRAY(r.models), CAST(ARRAY[] AS TEXT[])),"
        " CAST(x AS DOUBLE PRECISION) FROM runs AS r"
    )


def test_a_statement_sqlglot_cannot_parse_is_one_line() -> None:
    with pytest.raises(SqlSyntaxError, match=r"^[^\n\x1b]*\(line 1, column \d+\)$"):
        to_postgres("SELECT run_id FROM runs WHERE (status = ) AND x = ?")


def test_a_key_with_dots_stays_one_key() -> None:
    """Span attributes' names hold dots: DuckDB reads ``->> 'gen_ai.tool.name'`` as one key."""
    assert to_postgres("SELECT attributes->>'gen_ai.tool.name' FROM spans", False) == (
        "SELECT attributes ->> 'gen_ai.tool.name' FROM spans"
    )


def test_duckdbs_semantics_are_kept_where_postgresql_differs() -> None:
    """Integer division is a float in DuckDB; NULLs sort last both ways in DuckDB."""
    assert to_postgres("SELECT count(*) FILTER (WHERE ok) / count(*) FROM t", False) == (
        "SELECT CAST(COUNT(*) FILTER(WHERE ok) AS DOUBLE PRECISION) / COUNT(*) FROM t"
    )
    assert to_postgres("SELECT a FROM t ORDER BY a DESC", False) == (
        "SELECT a FROM t ORDER BY a DESC NULLS LAST"
    )
