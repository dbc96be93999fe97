-- Scores count every case: an ERROR case scores 0 wherever a score is averaged (it used to be
-- left out, so a regressed eval read "score 1.000" while its pass rate dropped).
-- Stored ERROR case results get score 0, each eval run's aggregate_score is recomputed over
-- every case, and the views average a result without a score as 0. suite_trend keeps every
-- column of 0004 and lists the readable ones first (pass rate, score, counts; ids last).

UPDATE case_results SET score = 0 WHERE status = 'ERROR' AND score IS DISTINCT FROM 0;

UPDATE eval_runs SET aggregate_score = per_run.score
FROM (
    SELECT eval_run_id, avg(score) AS score
    FROM (
        SELECT eval_run_id, case_id, avg(coalesce(score, 0)) AS score
        FROM case_results
        GROUP BY eval_run_id, case_id
    )
    GROUP BY eval_run_id
) AS per_run
WHERE eval_runs.eval_run_id = per_run.eval_run_id;

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
