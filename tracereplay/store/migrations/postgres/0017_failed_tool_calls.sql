-- The failed tool calls by their run's start, for the dashboard's counts of a window of days
-- (tracereplay/store/runs.py, live_tool_errors_by_day and live_per_agent): without it each
-- was a sequential scan of every tool call stored, a cost that grew with the store. Partial:
-- only failed calls are indexed, so ingest pays for the few rows it is for.
CREATE INDEX tool_calls_failed ON tool_calls (run_started_at) WHERE "error" IS NOT NULL;
