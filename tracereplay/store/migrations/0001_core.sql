-- Core relations: spans and log records as received, and the agent runs converted from them.
CREATE TABLE spans (
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
    ingested_at     TIMESTAMPTZ DEFAULT current_timestamp,
    PRIMARY KEY (trace_id, span_id)
);

CREATE TABLE logs (
    log_id          VARCHAR PRIMARY KEY,
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

CREATE TABLE runs (
    run_id          VARCHAR PRIMARY KEY,
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

CREATE TABLE tool_calls (
    run_id          VARCHAR NOT NULL,
    position        INTEGER NOT NULL,
    trace_id        VARCHAR,
    round           INTEGER,
    tool_name       VARCHAR,
    tool_call_id    VARCHAR,
    arguments       JSON,
    result          VARCHAR,
    duration_ms     DOUBLE,
    error           VARCHAR,
    PRIMARY KEY (run_id, position)
);

CREATE TABLE llm_calls (
    run_id          VARCHAR NOT NULL,
    round           INTEGER NOT NULL,
    trace_id        VARCHAR,
    span_id         VARCHAR,
    model           VARCHAR,
    provider        VARCHAR,
    input_tokens    BIGINT,
    output_tokens   BIGINT,
    duration_ms     DOUBLE,
    finish_reason   VARCHAR,
    started_at      TIMESTAMPTZ,
    input_messages  JSON,
    output_messages JSON,
    PRIMARY KEY (run_id, round)
);

-- How far each spool segment has been drained; updated in the same transaction as the data.
CREATE TABLE spool_offsets (
    segment         VARCHAR PRIMARY KEY,
    "offset"        BIGINT NOT NULL
);
