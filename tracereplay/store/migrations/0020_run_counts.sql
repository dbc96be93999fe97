-- `run_counts`: runs counted per kind, status, agent, service and list of models (the UI's
-- runs list reads its counts here). On DuckDB a view: its aggregate of `runs` reads five
-- columns, fast at any size. On PostgreSQL a table that triggers on `runs` keep
-- (migrations/postgres/0020_run_counts.sql), where that aggregate read every run's row.
-- A combination may have several rows there: always sum `n`.
CREATE VIEW run_counts AS
SELECT kind, status, agent_name, service_name, models, count(*) AS n
FROM runs GROUP BY kind, status, agent_name, service_name, models;
