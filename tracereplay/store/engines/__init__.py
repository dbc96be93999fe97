"""Store engines: which database a store target names, and the one class per engine.

A store target is a DuckDB file path (the embedded default) or a server URL
(``postgresql://user:password@host:5432/database``). Every command opens it through
``Store.open`` (``tracereplay/store/db.py``), which is the DuckDB engine itself and hands a URL to
``engines/postgres.py``'s ``PostgresStore``, a ``Store`` whose engine-specific methods (bulk
inserts, keyed inserts, locks, settings) talk to PostgreSQL. The commands' SQL is written once;
``engines/pg_sql.py`` carries the few DuckDB forms it uses over to PostgreSQL.
"""

from __future__ import annotations

SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(target: object) -> bool:
    """Whether a store target is a database server's URL rather than a DuckDB file."""
    return isinstance(target, str) and target.strip().lower().startswith(SERVER_SCHEMES)
