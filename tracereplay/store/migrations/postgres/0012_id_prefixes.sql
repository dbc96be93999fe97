-- The shortest unique prefixes `runs` and `diff` print (cli/common.py short_ids) are looked up
-- as ranges of a bytewise index (PostgresStore.shared_prefixes): under the database's own
-- collation the ids a prefix begins need not be one range, and the lookup read every id.
CREATE INDEX runs_id_c ON runs (run_id COLLATE "C");
CREATE INDEX eval_runs_id_c ON eval_runs (eval_run_id COLLATE "C");
