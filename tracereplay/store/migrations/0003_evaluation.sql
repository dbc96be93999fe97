-- Evaluation results: one eval run scores every case of a suite; each case has check results.
CREATE TABLE eval_runs (
    eval_run_id     VARCHAR PRIMARY KEY,
    suite_id        VARCHAR NOT NULL,
    suite_name      VARCHAR NOT NULL,
    mode            VARCHAR NOT NULL,      -- recorded | replay
    agent           VARCHAR,               -- module:callable in replay mode
    label           VARCHAR,
    started_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    git_commit      VARCHAR,
    git_dirty       BOOLEAN,
    status          VARCHAR NOT NULL,      -- running | completed | interrupted
    total_cases     INTEGER DEFAULT 0,
    passed          INTEGER DEFAULT 0,
    failed          INTEGER DEFAULT 0,
    errored         INTEGER DEFAULT 0,
    pass_rate       DOUBLE,
    aggregate_score DOUBLE,
    options         JSON
);

CREATE TABLE case_results (
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
    finished_at     TIMESTAMPTZ,
    PRIMARY KEY (eval_run_id, case_id, repetition)
);

CREATE TABLE check_results (
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
    details         JSON,
    PRIMARY KEY (eval_run_id, case_id, repetition, position)
);
