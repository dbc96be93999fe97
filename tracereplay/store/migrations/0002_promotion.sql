-- Promotion: evaluation suites and their cases (runs promoted into tests, or written by hand).
-- No foreign keys (DuckDB cannot cascade): eval_cases.suite_id -> eval_suites.suite_id and
-- eval_cases.source_run_id -> runs.run_id are kept by tracereplay.promote.
CREATE TABLE eval_suites (
    suite_id            VARCHAR PRIMARY KEY,
    name                VARCHAR NOT NULL UNIQUE,
    description         VARCHAR NOT NULL DEFAULT '',
    agent_name          VARCHAR NOT NULL DEFAULT '',
    checks              JSON NOT NULL,
    required_parameters JSON NOT NULL,
    metadata            JSON NOT NULL,
    created_at          TIMESTAMPTZ,
    updated_at          TIMESTAMPTZ
);

CREATE TABLE eval_cases (
    case_id             VARCHAR PRIMARY KEY,
    suite_id            VARCHAR NOT NULL,
    seq                 INTEGER NOT NULL,
    query               VARCHAR NOT NULL,
    context             JSON NOT NULL,
    expected_output     VARCHAR,
    expected_tool_calls JSON NOT NULL,
    parameters          JSON,
    checks              JSON,
    promoted_at         TIMESTAMPTZ,
    source_kind         VARCHAR,
    source_run_id       VARCHAR,
    tags                JSON NOT NULL,
    metadata            JSON NOT NULL,
    UNIQUE (suite_id, seq),
    UNIQUE (suite_id, source_run_id)
);
