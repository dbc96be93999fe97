-- case_results and check_results lose their primary keys. Each eval run writes its rows once,
-- under a fresh eval_run_id, so the keys never caught anything; keeping their indexes up to date
-- was half the cost of storing an eval's results. The columns stay as they were.
CREATE TABLE case_results_v5 (
    eval_run_id     VARCHAR NOT NULL,
    case_id         VARCHAR NOT NULL,
    repetition      INTEGER NOT NULL,      -- 0-based, see --repeat
    suite_id        VARCHAR,
    seq             INTEGER,
    status          VARCHAR NOT NULL,      -- PASSED | FAILED | ERROR
    score           DOUBLE,
    reason          VARCHAR,
    attempts        INTEGER DEFAULT 1,
    duration_ms     DOUBLE,
    run_id          VARCHAR,               -- the replay run, or the source run in recorded mode
    source_run_id   VARCHAR,
    response        VARCHAR,
    tool_calls      JSON,                  -- the trajectory scored: [ToolCallRecord]
    drift           JSON,                  -- replay: argument drift and unused recorded calls
    started_at      TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ
);
INSERT INTO case_results_v5 SELECT * FROM case_results;
DROP TABLE case_results;
ALTER TABLE case_results_v5 RENAME TO case_results;

CREATE TABLE check_results_v5 (
    eval_run_id     VARCHAR NOT NULL,
    case_id         VARCHAR NOT NULL,
    repetition      INTEGER NOT NULL,
    position        INTEGER NOT NULL,      -- order of the check in the case's check list
    check_name      VARCHAR NOT NULL,
    check_kind      VARCHAR NOT NULL,
    status          VARCHAR NOT NULL,      -- PASSED | FAILED | ERROR
    passed          BOOLEAN NOT NULL,
    score           DOUBLE,
    explanation     VARCHAR,
    details         JSON
);
INSERT INTO check_results_v5 SELECT * FROM check_results;
DROP TABLE check_results;
ALTER TABLE check_results_v5 RENAME TO check_results;
