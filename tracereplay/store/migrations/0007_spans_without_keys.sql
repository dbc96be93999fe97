-- spans, logs and runs lose their primary keys. A key's index grows with the table and DuckDB
-- loads it to insert a single row, so a drain's memory grew with the size of the store (about
-- 35 bytes per stored span). Duplicates are skipped as before, by looking only at the rows of
-- the traces a batch shares with the store (see Store.insert_span_table). The columns stay.
CREATE TABLE spans_v7 (
    trace_id        VARCHAR NOT NULL,
    span_id         VARCHAR NOT NULL,
    parent_span_id  VARCHAR,
    name            VARCHAR,
    kind            VARCHAR,
    start_time      TIMESTAMPTZ,
    end_time        TIMESTAMPTZ,
    duration_ms     DOUBLE,
    status_code     VARCHAR,
    status_message  VARCHAR,
    service_name    VARCHAR,
    scope_name      VARCHAR,
    attributes      JSON,
    events          JSON,
    links           JSON,
    resource        JSON,
    start_time_unix_nano BIGINT,
    end_time_unix_nano   BIGINT,
    ingested_at     TIMESTAMPTZ DEFAULT current_timestamp
);
INSERT INTO spans_v7 SELECT * FROM spans;
DROP TABLE spans;
ALTER TABLE spans_v7 RENAME TO spans;

CREATE TABLE logs_v7 (
    log_id          VARCHAR NOT NULL,
    trace_id        VARCHAR,
    span_id         VARCHAR,
    time            TIMESTAMPTZ,
    time_unix_nano  BIGINT,
    event_name      VARCHAR,
    body            JSON,
    attributes      JSON,
    severity_text   VARCHAR,
    service_name    VARCHAR,
    scope_name      VARCHAR
);
INSERT INTO logs_v7 SELECT * FROM logs;
DROP TABLE logs;
ALTER TABLE logs_v7 RENAME TO logs;

CREATE TABLE runs_v7 (
    run_id          VARCHAR NOT NULL,
    trace_id        VARCHAR NOT NULL,
    root_span_id    VARCHAR NOT NULL,
    parent_run_id   VARCHAR,
    agent_name      VARCHAR,
    service_name    VARCHAR,
    kind            VARCHAR,
    convention      VARCHAR,
    status          VARCHAR,
    query           VARCHAR,
    response        VARCHAR,
    context         JSON,
    parameters      JSON,
    models          JSON,
    input_tokens    BIGINT,
    output_tokens   BIGINT,
    total_rounds    INTEGER,
    total_llm_calls INTEGER,
    tool_calls_count INTEGER,
    started_at      TIMESTAMPTZ,
    duration_ms     DOUBLE,
    error           VARCHAR,
    eval_run_id     VARCHAR,
    case_id         VARCHAR,
    result          JSON,
    converted_at    TIMESTAMPTZ DEFAULT current_timestamp
);
INSERT INTO runs_v7 SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v7 RENAME TO runs;
