-- PostgreSQL gains an index of the failed tool calls by their run's start
-- (migrations/postgres/0017_failed_tool_calls.sql): the dashboard counts the failed tool calls
-- of a window of days, which without it was a sequential scan of every tool call stored.
-- DuckDB needs none: its zone maps on tool_calls.run_started_at (0009) skip the row groups
-- outside the window. This file keeps the two engines' version numbers in step.
SELECT 1;
