-- The PostgreSQL store: the tables and views of DuckDB's migrations 0001-0010 in their final
-- form (same names, same columns: docs/sql.md), created at once on an empty database. Later
-- migrations come in pairs (DuckDB's in migrations/, PostgreSQL's here, same number).
-- JSON columns are `json` (the text kept as written; ->> works); ids are text.
-- Unlike DuckDB's, the tables that must not hold a row twice declare their key: concurrent
-- writers (several `serve` instances, CI jobs) then insert with ON CONFLICT DO NOTHING.

-- DuckDB's names for functions PostgreSQL has under other names (the commands' SQL uses them)
CREATE OR REPLACE FUNCTION _tr_first(a anyelement, b anyelement) RETURNS anyelement
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT coalesce(a, b)';
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE p.proname = 'any_value' AND n.nspname IN ('pg_catalog', current_schema())) THEN
        CREATE AGGREGATE any_value(anyelement) (SFUNC = _tr_first, STYPE = anyelement);
    END IF;
END $$;
CREATE OR REPLACE AGGREGATE list(anycompatible) (SFUNC = array_append, STYPE = anycompatiblearray);
CREATE OR REPLACE FUNCTION round(v double precision, digits integer) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT round(v::numeric, digits)::double precision';
CREATE OR REPLACE FUNCTION make_timestamptz(us bigint) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT to_timestamp(us / 1000000.0)';
CREATE OR REPLACE FUNCTION epoch(i interval) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT extract(epoch FROM i)::double precision';
CREATE OR REPLACE FUNCTION epoch(t timestamptz) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT extract(epoch FROM t)::double precision';
CREATE OR REPLACE FUNCTION list_contains(l anyarray, v anyelement) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT v = ANY(l)';
CREATE OR REPLACE FUNCTION list_has_any(a anyarray, b anyarray) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT a && b';
CREATE OR REPLACE FUNCTION contains(a text, b text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT strpos(a, b) > 0';
CREATE OR REPLACE FUNCTION contains(a json, b text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT strpos(a::text, b) > 0';
CREATE OR REPLACE FUNCTION json_text_array(j json) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
    'SELECT coalesce(array_agg(x), ARRAY[]::text[]) FROM json_array_elements_text(j) AS x';

CREATE TABLE spool_offsets(segment text PRIMARY KEY, "offset" bigint NOT NULL);
CREATE TABLE eval_suites(suite_id text PRIMARY KEY, "name" text NOT NULL UNIQUE, description text DEFAULT '' NOT NULL, agent_name text DEFAULT '' NOT NULL, checks json NOT NULL, required_parameters json NOT NULL, metadata json NOT NULL, created_at timestamptz, updated_at timestamptz);
CREATE TABLE eval_cases(case_id text PRIMARY KEY, suite_id text NOT NULL, seq integer NOT NULL, query text NOT NULL, context json NOT NULL, expected_output text, expected_tool_calls json NOT NULL, parameters json, checks json, promoted_at timestamptz, source_kind text, source_run_id text, tags json NOT NULL, metadata json NOT NULL, UNIQUE(suite_id, seq), UNIQUE(suite_id, source_run_id));
CREATE TABLE eval_runs(eval_run_id text PRIMARY KEY, suite_id text NOT NULL, suite_name text NOT NULL, "mode" text NOT NULL, agent text, "label" text, started_at timestamptz NOT NULL, finished_at timestamptz, git_commit text, git_dirty boolean, status text NOT NULL, total_cases integer DEFAULT 0, passed integer DEFAULT 0, failed integer DEFAULT 0, errored integer DEFAULT 0, pass_rate double precision, aggregate_score double precision, "options" json);
CREATE TABLE case_results(eval_run_id text NOT NULL, case_id text NOT NULL, repetition integer NOT NULL, suite_id text, seq integer, status text NOT NULL, score double precision, reason text, attempts integer DEFAULT 1, duration_ms double precision, run_id text, source_run_id text, response text, tool_calls json, drift json, started_at timestamptz, finished_at timestamptz);
CREATE INDEX case_results_run ON case_results (eval_run_id, case_id);
CREATE TABLE check_results(eval_run_id text NOT NULL, case_id text NOT NULL, repetition integer NOT NULL, "position" integer NOT NULL, check_name text NOT NULL, check_kind text NOT NULL, status text NOT NULL, passed boolean NOT NULL, score double precision, explanation text, details json);
CREATE INDEX check_results_run ON check_results (eval_run_id, case_id);
CREATE TABLE tool_calls(run_id text NOT NULL, "position" integer NOT NULL, trace_id text, round integer, tool_name text, tool_call_id text, arguments json, result text, duration_ms double precision, "error" text, run_started_at timestamptz);
CREATE INDEX tool_calls_run ON tool_calls (run_id);
CREATE INDEX tool_calls_trace ON tool_calls (trace_id);
CREATE TABLE llm_calls(run_id text NOT NULL, round integer NOT NULL, trace_id text, span_id text, model text, provider text, input_tokens bigint, output_tokens bigint, duration_ms double precision, finish_reason text, started_at timestamptz, input_messages json, output_messages json);
CREATE INDEX llm_calls_run ON llm_calls (run_id);
CREATE INDEX llm_calls_trace ON llm_calls (trace_id);
CREATE TABLE spans(trace_id text NOT NULL, span_id text NOT NULL, parent_span_id text, "name" text, kind text, start_time timestamptz, end_time timestamptz, duration_ms double precision, status_code text, status_message text, service_name text, scope_name text, attributes json, events json, links json, "resource" json, start_time_unix_nano bigint, end_time_unix_nano bigint, ingested_at timestamptz DEFAULT current_timestamp, PRIMARY KEY (trace_id, span_id));
CREATE INDEX spans_start ON spans (start_time_unix_nano);
CREATE TABLE logs(log_id text NOT NULL PRIMARY KEY, trace_id text, span_id text, "time" timestamptz, time_unix_nano bigint, event_name text, body json, attributes json, severity_text text, service_name text, scope_name text);
CREATE INDEX logs_trace ON logs (trace_id);
CREATE TABLE runs(run_id text NOT NULL PRIMARY KEY, trace_id text NOT NULL, root_span_id text NOT NULL, parent_run_id text, agent_name text, service_name text, kind text, convention text, status text, query text, response text, context json, parameters json, models json, input_tokens bigint, output_tokens bigint, total_rounds integer, total_llm_calls integer, tool_calls_count integer, started_at timestamptz, duration_ms double precision, "error" text, eval_run_id text, case_id text, result json, converted_at timestamptz DEFAULT current_timestamp);
CREATE INDEX runs_trace ON runs (trace_id);
CREATE INDEX runs_started ON runs (started_at);
CREATE INDEX runs_eval ON runs (eval_run_id) WHERE eval_run_id IS NOT NULL;
CREATE TABLE monitors("name" text PRIMARY KEY, checks json NOT NULL, agent_name text, service_name text, predicate text, "sample" double precision DEFAULT 1.0 NOT NULL, created_at timestamptz DEFAULT current_timestamp, updated_at timestamptz DEFAULT current_timestamp);
CREATE TABLE monitor_results(monitor text NOT NULL, run_id text NOT NULL, trace_id text, agent_name text, check_name text NOT NULL, check_kind text, status text, passed boolean, score double precision, reason text, details json, run_started_at timestamptz, run_converted_at timestamptz, judged_at timestamptz DEFAULT current_timestamp);
CREATE INDEX monitor_results_run ON monitor_results (monitor, run_id);
CREATE TABLE monitor_judge_calls(monitor text NOT NULL, run_id text NOT NULL, check_name text NOT NULL, model text, endpoint text, input_tokens bigint, output_tokens bigint, duration_ms double precision, "error" text, started_at timestamptz);

CREATE VIEW score_history AS SELECT er.suite_id, er.suite_name, ch.case_id, cr.seq, ch.eval_run_id, er."label", er.git_commit, er."mode", er.started_at, ch.repetition, ch."position" AS check_position, ch.check_name, ch.check_kind, ch.score, ch.passed, ch.status, ch.explanation, cr.status AS case_status FROM ((check_results AS ch INNER JOIN eval_runs AS er ON ((er.eval_run_id = ch.eval_run_id))) LEFT JOIN case_results AS cr ON (((cr.eval_run_id = ch.eval_run_id) AND (cr.case_id = ch.case_id) AND (cr.repetition = ch.repetition))));

CREATE VIEW tool_usage AS SELECT r.agent_name, r.kind AS run_kind, tc.tool_name, count(*) AS calls, count(DISTINCT tc.run_id) AS runs, count(tc."error") AS errors, (count(tc."error")::double precision / count(*)) AS error_rate, percentile_cont(0.5) WITHIN GROUP (ORDER BY tc.duration_ms) AS p50_ms, percentile_cont(0.95) WITHIN GROUP (ORDER BY tc.duration_ms) AS p95_ms, avg(tc.duration_ms) AS avg_ms, max(tc.duration_ms) AS max_ms, min(r.started_at) AS first_seen, max(r.started_at) AS last_seen FROM (tool_calls AS tc INNER JOIN runs AS r ON ((r.run_id = tc.run_id))) GROUP BY r.agent_name, r.kind, tc.tool_name;

CREATE VIEW run_summary AS WITH calls AS (SELECT run_id, count("error") AS tool_errors, array_agg(DISTINCT tool_name ORDER BY tool_name) AS tools FROM tool_calls GROUP BY run_id), promoted AS (SELECT source_run_id AS run_id, count(*) AS promoted_cases FROM eval_cases WHERE (source_run_id IS NOT NULL) GROUP BY source_run_id) SELECT r.run_id, r.trace_id, r.parent_run_id, r.agent_name, r.service_name, r.kind, r.convention, r.status, r.started_at, CAST(timezone('UTC', r.started_at) AS DATE) AS "day", r.duration_ms, r.total_llm_calls AS llm_calls, r.total_rounds AS rounds, r.input_tokens, r.output_tokens, (COALESCE(r.input_tokens, 0) + COALESCE(r.output_tokens, 0)) AS total_tokens, r.tool_calls_count AS tool_calls, COALESCE(c.tool_errors, 0) AS tool_errors, COALESCE(c.tools, ARRAY[]::text[]) AS tools, r.models, r.query, r."error", r.eval_run_id, r.case_id, COALESCE(p.promoted_cases, 0) AS promoted_cases FROM ((runs AS r LEFT JOIN calls AS c ON ((c.run_id = r.run_id))) LEFT JOIN promoted AS p ON ((p.run_id = r.run_id)));

CREATE VIEW case_history AS WITH per_case AS (SELECT eval_run_id, case_id, min(seq) AS seq, any_value(source_run_id) AS source_run_id, count(*) AS repetitions, count(*) FILTER (WHERE (status = 'PASSED')) AS passed_repetitions, count(*) FILTER (WHERE (status = 'FAILED')) AS failed_repetitions, count(*) FILTER (WHERE (status = 'ERROR')) AS errored_repetitions, avg(COALESCE(score, 0)) AS score, min(COALESCE(score, 0)) AS min_score, max(COALESCE(score, 0)) AS max_score, avg(duration_ms) AS duration_ms, (array_agg(reason ORDER BY repetition) FILTER (WHERE (status != 'PASSED')))[1] AS reason FROM case_results GROUP BY eval_run_id, case_id) SELECT er.suite_id, er.suite_name, pc.case_id, pc.seq, ec.query, pc.eval_run_id, er."label", er.git_commit, er."mode", er.started_at, CASE  WHEN ((pc.passed_repetitions = pc.repetitions)) THEN ('PASSED') WHEN ((pc.failed_repetitions > 0)) THEN ('FAILED') ELSE 'ERROR' END AS status, pc.score, pc.min_score, pc.max_score, pc.repetitions, pc.passed_repetitions, pc.failed_repetitions, pc.errored_repetitions, ((pc.passed_repetitions > 0) AND (pc.passed_repetitions < pc.repetitions)) AS flaky, pc.duration_ms, pc.reason, pc.source_run_id FROM ((per_case AS pc INNER JOIN eval_runs AS er ON ((er.eval_run_id = pc.eval_run_id))) LEFT JOIN eval_cases AS ec ON ((ec.case_id = pc.case_id)));

CREATE VIEW suite_trend AS WITH per_case AS (SELECT eval_run_id, case_id, bool_and((status = 'PASSED')) AS passed, bool_or((status = 'FAILED')) AS failed, (bool_or((status = 'PASSED')) AND (NOT bool_and((status = 'PASSED')))) AS flaky, avg(COALESCE(score, 0)) AS score FROM case_results GROUP BY eval_run_id, case_id), per_run AS (SELECT eval_run_id, count(*) AS cases, count(*) FILTER (WHERE passed) AS passed, count(*) FILTER (WHERE ((NOT passed) AND failed)) AS failed, count(*) FILTER (WHERE ((NOT passed) AND (NOT failed))) AS errored, count(*) FILTER (WHERE flaky) AS flaky, avg(score) AS aggregate_score FROM per_case GROUP BY eval_run_id), per_check AS (SELECT eval_run_id, count(*) AS checks, count(*) FILTER (WHERE passed) AS checks_passed FROM check_results GROUP BY eval_run_id), runs AS (SELECT er.suite_id, er.suite_name, er.eval_run_id, er."label", er.git_commit, er."mode", er.status AS run_status, er.started_at, er.finished_at, COALESCE(pr.cases, 0) AS cases, COALESCE(pr.passed, 0) AS passed, COALESCE(pr.failed, 0) AS failed, COALESCE(pr.errored, 0) AS errored, COALESCE(pr.flaky, 0) AS flaky, CASE  WHEN ((pr.cases > 0)) THEN ((pr.passed::double precision / pr.cases)) ELSE NULL END AS pass_rate, pr.aggregate_score, COALESCE(pc.checks, 0) AS checks, COALESCE(pc.checks_passed, 0) AS checks_passed, CASE  WHEN ((pc.checks > 0)) THEN ((pc.checks_passed::double precision / pc.checks)) ELSE NULL END AS check_pass_rate FROM ((eval_runs AS er LEFT JOIN per_run AS pr ON ((pr.eval_run_id = er.eval_run_id))) LEFT JOIN per_check AS pc ON ((pc.eval_run_id = er.eval_run_id)))) SELECT suite_name, row_number() OVER (PARTITION BY suite_id ORDER BY started_at, eval_run_id) AS run_number, started_at, "label", pass_rate, aggregate_score, cases, passed, failed, errored, flaky, (pass_rate - lag(pass_rate) OVER (PARTITION BY suite_id ORDER BY started_at, eval_run_id)) AS pass_rate_change, (aggregate_score - lag(aggregate_score) OVER (PARTITION BY suite_id ORDER BY started_at, eval_run_id)) AS score_change, "mode", run_status, finished_at, git_commit, checks, checks_passed, check_pass_rate, eval_run_id, suite_id FROM runs;
