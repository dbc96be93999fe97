-- The dashboard's reads as index-only scans (tracereplay/store/runs.py: live_days,
-- live_tool_errors_by_day, live_per_agent, live_agents). Each of them read the rows of `runs`
-- in its window (the agent picker: every live run), and a row of `runs` carries the run's
-- query, response and context: a pass over 100,000 runs read ~150 MB, and the page made five.
-- The live runs by start, with the columns the dashboard aggregates:
CREATE INDEX runs_live_started ON runs (started_at)
    INCLUDE (run_id, agent_name, status, duration_ms, input_tokens, output_tokens, tool_calls_count)
    WHERE kind = 'live';
-- The agent picker counts every live run per agent (no time bound): the names alone, which
-- the index deduplicates (700 kB per 100,000 runs). Named agents only, as the picker reads
-- them: the per-agent aggregate (unnamed runs too) cannot use it, whose planner otherwise
-- took its order by name over the index-only scan above, a row fetched per run.
CREATE INDEX runs_live_agent ON runs (agent_name) WHERE kind = 'live' AND agent_name IS NOT NULL;
-- 0017's failed tool calls by their run's start, now with the run's id: the join with the
-- window's runs reads the index only (0017's fetched each failed call's row).
CREATE INDEX tool_calls_failed_run ON tool_calls (run_started_at) INCLUDE (run_id)
    WHERE "error" IS NOT NULL;
DROP INDEX tool_calls_failed;
