"""Store engines: which database a store target names, and one module per engine.

A store target is a DuckDB file path (the embedded default) or a server URL
(``postgresql://user:password@host:5432/database``). Every command opens it through
``Store.open`` (``tracereplay/store/db.py``), which picks the engine by the target
(``engine_of``) and delegates to it what that database does its own way (``base.py`` states the
interface): ``duckdb.py`` for a file, ``postgres.py`` for a server. The commands' SQL is
written once, in DuckDB's dialect; ``pg_sql.py`` carries it over to PostgreSQL.
"""

from __future__ import annotations

SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(target: object) -> bool:
    """Whether a store target is a database server's URL rather than a DuckDB file."""
    return isinstance(target, str) and target.strip().lower().startswith(SERVER_SCHEMES)


def engine_of(target: object) -> str:
    """The name of the engine that holds a store target ("duckdb", "postgres")."""
    return "postgres" if is_server_url(str(target)) else "duckdb"
