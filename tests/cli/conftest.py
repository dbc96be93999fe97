"""Fixtures of the cli tests: a real PostgreSQL server (tests/postgres_server.py)."""

from postgres_server import pg_server, pg_url, store_target  # noqa: F401
