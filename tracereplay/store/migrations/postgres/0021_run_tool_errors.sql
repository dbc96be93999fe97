-- runs gain tool_errors_count (migrations/0021_run_tool_errors.sql says why). A constant
-- default costs PostgreSQL no rewrite: only the runs with a failed call are updated.
ALTER TABLE runs ADD COLUMN tool_errors_count integer DEFAULT 0;
UPDATE runs SET tool_errors_count = c.n
FROM (SELECT run_id, count(*) AS n FROM tool_calls WHERE "error" IS NOT NULL GROUP BY run_id) AS c
WHERE c.run_id = runs.run_id;
-- 0018's covering index of live runs by start, with the new column: the dashboard's one read
-- of its window stays an index-only scan.
DROP INDEX runs_live_started;
CREATE INDEX runs_live_started ON runs (started_at)
    INCLUDE (run_id, agent_name, status, duration_ms, input_tokens, output_tokens,
             tool_calls_count, tool_errors_count)
    WHERE kind = 'live';
-- 0018's failed tool calls by their run's start served only the join this replaces: every
-- failed tool call written no longer updates it.
DROP INDEX tool_calls_failed_run;
