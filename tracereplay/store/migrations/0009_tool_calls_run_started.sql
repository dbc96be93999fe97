-- tool_calls gains run_started_at, its run's start (runs.started_at). A run converted again
-- (a late span) has its old tool calls deleted; with no time on them that delete read the
-- trace ids of every tool call stored, a cost that grew with the store. By time, DuckDB's zone
-- maps skip the row groups of older traffic (see TimeWindow in tracereplay/store/db.py).
ALTER TABLE tool_calls ADD COLUMN run_started_at TIMESTAMPTZ;
UPDATE tool_calls SET run_started_at = r.started_at
FROM runs AS r WHERE r.run_id = tool_calls.run_id;
