-- Sessions (migrations/0015_sessions.sql says more): runs' session_id, with an index to find a
-- session's turns, and eval_cases' history.
ALTER TABLE runs ADD COLUMN session_id text;
CREATE INDEX runs_session ON runs (session_id, started_at) WHERE session_id IS NOT NULL;
ALTER TABLE eval_cases ADD COLUMN history json;
