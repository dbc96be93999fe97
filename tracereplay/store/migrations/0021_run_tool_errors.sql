-- runs gain tool_errors_count: the run's tool calls that failed (rows of the run in
-- `tool_calls` with an error), written with tool_calls_count whenever a run is (re)built. The
-- dashboard counts a window's failed tool calls from it, in its one read of the window's runs,
-- where it joined the window's failed calls to their runs (a second read of the runs).
-- Runs stored before this version are counted here; a new column's default, 0, is right for
-- every run without a failed call.
ALTER TABLE runs ADD COLUMN tool_errors_count INTEGER DEFAULT 0;
UPDATE runs SET tool_errors_count = c.n
FROM (SELECT run_id, count(*) AS n FROM tool_calls WHERE error IS NOT NULL GROUP BY run_id) AS c
WHERE c.run_id = runs.run_id;
