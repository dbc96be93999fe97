-- Multi-turn cases (issue 54).
-- eval_cases gain turns: a multi-turn case's user turns in order, turn 1 first,
-- [{"query", "response", "expected_output", "expected_tool_calls", "source_run_id"}]
-- (`promote --session`). NULL: a one-question case.
-- case_results and check_results gain turn: NULL on the row of a case as a whole (every case
-- has one per repetition, as before), 1..N on the rows of a multi-turn case's turns. The views
-- read the cases as a whole (turn IS NULL), so their counts are unchanged.
ALTER TABLE eval_cases ADD COLUMN turns JSON;
ALTER TABLE case_results ADD COLUMN turn INTEGER;
ALTER TABLE check_results ADD COLUMN turn INTEGER;

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
    AND cr.repetition = ch.repetition
    AND cr.turn IS NULL
WHERE ch.turn IS NULL;

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
        avg(coalesce(score, 0)) AS score,
        min(coalesce(score, 0)) AS min_score,
        max(coalesce(score, 0)) AS max_score,
        avg(duration_ms) AS duration_ms,
        arg_min(reason, repetition) FILTER (WHERE status <> 'PASSED') AS reason
    FROM case_results
    WHERE turn IS NULL
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

CREATE OR REPLACE VIEW suite_trend AS
WITH per_case AS (
    SELECT
        eval_run_id,
        case_id,
        bool_and(status = 'PASSED') AS passed,
        bool_or(status = 'FAILED') AS failed,
        bool_or(status = 'PASSED') AND NOT bool_and(status = 'PASSED') AS flaky,
        avg(coalesce(score, 0)) AS score
    FROM case_results
    WHERE turn IS NULL
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
    WHERE turn IS NULL
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
    suite_name,
    row_number() OVER w AS run_number,
    started_at,
    label,
    pass_rate,
    aggregate_score,
    cases,
    passed,
    failed,
    errored,
    flaky,
    pass_rate - lag(pass_rate) OVER w AS pass_rate_change,
    aggregate_score - lag(aggregate_score) OVER w AS score_change,
    mode,
    run_status,
    finished_at,
    git_commit,
    checks,
    checks_passed,
    check_pass_rate,
    eval_run_id,
    suite_id
FROM runs
WINDOW w AS (PARTITION BY suite_id ORDER BY started_at, eval_run_id);
