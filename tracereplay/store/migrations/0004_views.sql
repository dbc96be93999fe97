-- Stable views for the questions people ask of their history (documented in docs/sql.md).
-- A view that has to change later is redefined by a later migration (CREATE OR REPLACE VIEW),
-- keeping every column listed here.

-- One row per check per case repetition per eval run.
CREATE OR REPLACE VIEW score_history AS
SELECT
    er.suite_id,
    er.suite_name,
    ch.case_id,
    cr.seq,
    ch.eval_run_id,
    er.label,
    er.git_commit,
    er.mode,
    er.started_at,
    ch.repetition,
    ch.position AS check_position,
    ch.check_name,
    ch.check_kind,
    ch.score,
    ch.passed,
    ch.status,
    ch.explanation,
    cr.status AS case_status
FROM check_results AS ch
JOIN eval_runs AS er ON er.eval_run_id = ch.eval_run_id
LEFT JOIN case_results AS cr
    ON cr.eval_run_id = ch.eval_run_id
    AND cr.case_id = ch.case_id
    AND cr.repetition = ch.repetition;

-- One row per case per eval run, its repetitions combined: PASSED only when every repetition
-- passed, FAILED when one failed, else ERROR; score = mean of the repetitions' scores.
CREATE OR REPLACE VIEW case_history AS
WITH per_case AS (
    SELECT
        eval_run_id,
        case_id,
        min(seq) AS seq,
        any_value(source_run_id) AS source_run_id,
        count(*) AS repetitions,
        count(*) FILTER (WHERE status = 'PASSED') AS passed_repetitions,
        count(*) FILTER (WHERE status = 'FAILED') AS failed_repetitions,
        count(*) FILTER (WHERE status = 'ERROR') AS errored_repetitions,
        avg(score) AS score,
        min(score) AS min_score,
        max(score) AS max_score,
        avg(duration_ms) AS duration_ms,
        arg_min(reason, repetition) FILTER (WHERE status <> 'PASSED') AS reason
    FROM case_results
    GROUP BY eval_run_id, case_id
)
SELECT
    er.suite_id,
    er.suite_name,
    pc.case_id,
    pc.seq,
    ec.query,
    pc.eval_run_id,
    er.label,
    er.git_commit,
    er.mode,
    er.started_at,
    CASE
        WHEN pc.passed_repetitions = pc.repetitions THEN 'PASSED'
        WHEN pc.failed_repetitions > 0 THEN 'FAILED'
        ELSE 'ERROR'
    END AS status,
    pc.score,
    pc.min_score,
    pc.max_score,
    pc.repetitions,
    pc.passed_repetitions,
    pc.failed_repetitions,
    pc.errored_repetitions,
    pc.passed_repetitions > 0 AND pc.passed_repetitions < pc.repetitions AS flaky,
    pc.duration_ms,
    pc.reason,
    pc.source_run_id
FROM per_case AS pc
JOIN eval_runs AS er ON er.eval_run_id = pc.eval_run_id
LEFT JOIN eval_cases AS ec ON ec.case_id = pc.case_id;

-- One row per eval run: its suite, when, and how it did (counts over cases as in case_history).
CREATE OR REPLACE VIEW suite_trend AS
WITH per_case AS (
    SELECT
        eval_run_id,
        case_id,
        bool_and(status = 'PASSED') AS passed,
        bool_or(status = 'FAILED') AS failed,
        bool_or(status = 'PASSED') AND NOT bool_and(status = 'PASSED') AS flaky,
        avg(score) AS score
    FROM case_results
    GROUP BY eval_run_id, case_id
),
per_run AS (
    SELECT
        eval_run_id,
        count(*) AS cases,
        count(*) FILTER (WHERE passed) AS passed,
        count(*) FILTER (WHERE NOT passed AND failed) AS failed,
        count(*) FILTER (WHERE NOT passed AND NOT failed) AS errored,
        count(*) FILTER (WHERE flaky) AS flaky,
        avg(score) AS aggregate_score
    FROM per_case
    GROUP BY eval_run_id
),
per_check AS (
    SELECT
        eval_run_id,
        count(*) AS checks,
        count(*) FILTER (WHERE passed) AS checks_passed
    FROM check_results
    GROUP BY eval_run_id
),
runs AS (
    SELECT
        er.suite_id,
        er.suite_name,
        er.eval_run_id,
        er.label,
        er.git_commit,
        er.mode,
        er.status AS run_status,
        er.started_at,
        er.finished_at,
        coalesce(pr.cases, 0) AS cases,
        coalesce(pr.passed, 0) AS passed,
        coalesce(pr.failed, 0) AS failed,
        coalesce(pr.errored, 0) AS errored,
        coalesce(pr.flaky, 0) AS flaky,
        CASE WHEN pr.cases > 0 THEN pr.passed / pr.cases END AS pass_rate,
        pr.aggregate_score,
        coalesce(pc.checks, 0) AS checks,
        coalesce(pc.checks_passed, 0) AS checks_passed,
        CASE WHEN pc.checks > 0 THEN pc.checks_passed / pc.checks END AS check_pass_rate
    FROM eval_runs AS er
    LEFT JOIN per_run AS pr ON pr.eval_run_id = er.eval_run_id
    LEFT JOIN per_check AS pc ON pc.eval_run_id = er.eval_run_id
)
SELECT
    *,
    row_number() OVER w AS run_number,
    pass_rate - lag(pass_rate) OVER w AS pass_rate_change,
    aggregate_score - lag(aggregate_score) OVER w AS score_change
FROM runs
WINDOW w AS (PARTITION BY suite_id ORDER BY started_at, eval_run_id);

-- One row per agent, run kind (live or replay) and tool.
CREATE OR REPLACE VIEW tool_usage AS
SELECT
    r.agent_name,
    r.kind AS run_kind,
    tc.tool_name,
    count(*) AS calls,
    count(DISTINCT tc.run_id) AS runs,
    count(tc.error) AS errors,
    count(tc.error) / count(*) AS error_rate,
    quantile_cont(tc.duration_ms, 0.5) AS p50_ms,
    quantile_cont(tc.duration_ms, 0.95) AS p95_ms,
    avg(tc.duration_ms) AS avg_ms,
    max(tc.duration_ms) AS max_ms,
    min(r.started_at) AS first_seen,
    max(r.started_at) AS last_seen
FROM tool_calls AS tc
JOIN runs AS r ON r.run_id = tc.run_id
GROUP BY r.agent_name, r.kind, tc.tool_name;

-- One row per run: the runs table's headline columns plus what is otherwise a join away.
CREATE OR REPLACE VIEW run_summary AS
WITH calls AS (
    SELECT
        run_id,
        count(error) AS tool_errors,
        list(DISTINCT tool_name ORDER BY tool_name) AS tools
    FROM tool_calls
    GROUP BY run_id
),
promoted AS (
    SELECT source_run_id AS run_id, count(*) AS promoted_cases
    FROM eval_cases
    WHERE source_run_id IS NOT NULL
    GROUP BY source_run_id
)
SELECT
    r.run_id,
    r.trace_id,
    r.parent_run_id,
    r.agent_name,
    r.service_name,
    r.kind,
    r.convention,
    r.status,
    r.started_at,
    CAST(timezone('UTC', r.started_at) AS DATE) AS day,
    r.duration_ms,
    r.total_llm_calls AS llm_calls,
    r.total_rounds AS rounds,
    r.input_tokens,
    r.output_tokens,
    coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0) AS total_tokens,
    r.tool_calls_count AS tool_calls,
    coalesce(c.tool_errors, 0) AS tool_errors,
    coalesce(c.tools, []) AS tools,
    r.models,
    r.query,
    r.error,
    r.eval_run_id,
    r.case_id,
    coalesce(p.promoted_cases, 0) AS promoted_cases
FROM runs AS r
LEFT JOIN calls AS c ON c.run_id = r.run_id
LEFT JOIN promoted AS p ON p.run_id = r.run_id;
