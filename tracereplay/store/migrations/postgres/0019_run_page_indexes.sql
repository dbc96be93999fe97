-- `runs --status X` (tracereplay/store/runs.py, list_runs: runs of one status, newest first)
-- read in the index's order, as `runs_newest` serves the unfiltered list; without it the
-- planner walked `runs_newest` fetching every run to test its status (+0.44 s at 1.5M runs).
CREATE INDEX runs_status_newest ON runs (status, started_at DESC NULLS LAST, run_id);
-- The run page's reads by run or case id (tracereplay/store/runs.py: sub_run_links,
-- replay_links; monitors.py: run_monitor_results; suites.py: cases_from_run) as index
-- lookups. Without them each was a sequential scan of its table: a run's sub-runs and its
-- cases' replays of every row of `runs` (0.46 s of the page at 1.5M runs), which grew with
-- the store. Partial where most rows have no value (top-level runs, live runs).
CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_case ON runs (case_id) WHERE case_id IS NOT NULL;
CREATE INDEX monitor_results_by_run ON monitor_results (run_id);
CREATE INDEX eval_cases_source ON eval_cases (source_run_id) WHERE source_run_id IS NOT NULL;
