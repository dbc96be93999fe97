-- Monitors: production runs judged as they arrive (issue 29). A monitor is a named list of checks
-- (any kind a suite may name), a selector (agent, service, a SQL predicate over runs) and a
-- sampling rate. Each scored run gets one monitor_results row per check; run_converted_at is the
-- converted_at of the runs row that was judged, so a run re-converted by a late span (its row
-- replaced, with a new converted_at) is judged again. monitor_judge_calls holds every judge
-- (llmJudge) call a monitor made: model, tokens, latency, as llm_calls does for agents.

CREATE TABLE monitors (
    name            VARCHAR PRIMARY KEY,
    checks          JSON NOT NULL,
    agent_name      VARCHAR,
    service_name    VARCHAR,
    predicate       VARCHAR,
    sample          DOUBLE NOT NULL DEFAULT 1.0,
    created_at      TIMESTAMPTZ DEFAULT current_timestamp,
    updated_at      TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE monitor_results (
    monitor          VARCHAR NOT NULL,
    run_id           VARCHAR NOT NULL,
    trace_id         VARCHAR,
    agent_name       VARCHAR,
    check_name       VARCHAR NOT NULL,
    check_kind       VARCHAR,
    status           VARCHAR,
    passed           BOOLEAN,
    score            DOUBLE,
    reason           VARCHAR,
    details          JSON,
    run_started_at   TIMESTAMPTZ,
    run_converted_at TIMESTAMPTZ,
    judged_at        TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE monitor_judge_calls (
    monitor         VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    check_name      VARCHAR NOT NULL,
    model           VARCHAR,
    endpoint        VARCHAR,
    input_tokens    BIGINT,
    output_tokens   BIGINT,
    duration_ms     DOUBLE,
    error           VARCHAR,
    started_at      TIMESTAMPTZ
);
