-- PostgreSQL gains covering indexes for the dashboard's reads
-- (migrations/postgres/0018_dashboard_indexes.sql): its aggregates of a window of live runs,
-- its agent picker and its failed tool calls read narrow indexes instead of the rows of `runs`,
-- whose width (queries, responses, contexts) made each pass a read of every page in the window.
-- DuckDB needs none: it reads only the columns a query names. This file keeps the two
-- engines' version numbers in step.
SELECT 1;
