-- PostgreSQL's 0012 indexes run and eval run ids bytewise for the prefix lookups of `runs` and
-- `diff` (migrations/postgres/0012_id_prefixes.sql). A DuckDB file needs nothing: the lookup is
-- one columnar scan of the id column (Store.shared_prefixes). This twin keeps both engines'
-- versions in step.
SELECT 1;
