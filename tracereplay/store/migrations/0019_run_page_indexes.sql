-- PostgreSQL gains indexes for the run page's reads by run or case id
-- (migrations/postgres/0019_run_page_indexes.sql): a run's sub-runs, its cases' replays, its
-- monitor results and the cases promoted from it, each a sequential scan of its table there.
-- DuckDB needs none: it scans the one column a filter names. This file keeps the two
-- engines' version numbers in step.
SELECT 1;
