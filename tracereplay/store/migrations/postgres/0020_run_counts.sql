-- The runs list's counts (the UI's /runs: how many runs match, and per kind, status, agent,
-- service and list of models) read from `run_counts` instead of an aggregate of every run:
-- 1.9 s of the page at 1.5M runs, growing with the store. Triggers on `runs` keep it, so
-- every writer (ingest, eval, import, prune, `sql --write`) does, in its own transaction.
--
-- Each statement that changes runs appends its change per combination (negative for runs
-- removed); nothing updates a shared row, so concurrent writers never wait on each other or
-- deadlock here. Readers always sum `n` per combination. When the table holds more than
-- 4096 rows, a writer folds them into one per combination (one writer at a time: a
-- transaction-scoped advisory lock, skipped when another holds it; the folded rows are
-- exactly the ones its DELETE removed, so a fold never counts a row twice).
-- The dashboard's agent picker counts live runs per agent here too: 0018's index of live runs'
-- agents, which it read whole (an entry per run), goes.
DROP INDEX runs_live_agent;

CREATE TABLE run_counts(
    kind text, status text, agent_name text, service_name text, models json, n bigint NOT NULL
);

CREATE FUNCTION run_counts_fold() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM (SELECT 1 FROM run_counts LIMIT 4097) AS r) > 4096
       AND pg_try_advisory_xact_lock(7310582615093371920) THEN
        WITH gone AS (DELETE FROM run_counts RETURNING *)
        INSERT INTO run_counts
        SELECT kind, status, agent_name, service_name, models::text::json, sum(n)
        FROM (SELECT kind, status, agent_name, service_name, models::text AS models, n
              FROM gone) AS g
        GROUP BY kind, status, agent_name, service_name, models
        HAVING sum(n) <> 0;
    END IF;
END $$;

CREATE FUNCTION run_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_counts
    SELECT kind, status, agent_name, service_name, models::json, count(*)
    FROM (SELECT kind, status, agent_name, service_name, models::text AS models
          FROM added) AS a
    GROUP BY kind, status, agent_name, service_name, models;
    PERFORM run_counts_fold();
    RETURN NULL;
END $$;

CREATE FUNCTION run_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_counts
    SELECT kind, status, agent_name, service_name, models::json, -count(*)
    FROM (SELECT kind, status, agent_name, service_name, models::text AS models
          FROM removed) AS r
    GROUP BY kind, status, agent_name, service_name, models;
    PERFORM run_counts_fold();
    RETURN NULL;
END $$;

CREATE FUNCTION run_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_counts
    SELECT kind, status, agent_name, service_name, models::json, sum(n)
    FROM (SELECT kind, status, agent_name, service_name, models::text AS models, 1 AS n
          FROM added
          UNION ALL
          SELECT kind, status, agent_name, service_name, models::text, -1 FROM removed) AS c
    GROUP BY kind, status, agent_name, service_name, models
    HAVING sum(n) <> 0;
    PERFORM run_counts_fold();
    RETURN NULL;
END $$;

CREATE FUNCTION run_counts_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_counts;
    RETURN NULL;
END $$;

CREATE TRIGGER run_counts_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION run_counts_added();
CREATE TRIGGER run_counts_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION run_counts_removed();
CREATE TRIGGER run_counts_update AFTER UPDATE ON runs
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION run_counts_changed();
CREATE TRIGGER run_counts_truncate AFTER TRUNCATE ON runs
    FOR EACH STATEMENT EXECUTE FUNCTION run_counts_emptied();

INSERT INTO run_counts
SELECT kind, status, agent_name, service_name, models::json, count(*)
FROM (SELECT kind, status, agent_name, service_name, models::text AS models FROM runs) AS r
GROUP BY kind, status, agent_name, service_name, models;
