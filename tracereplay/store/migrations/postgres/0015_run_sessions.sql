-- runs gain session_id: the conversation a run is a turn of (migrations/0015_run_sessions.sql
-- says more); the index finds a session's turns.
ALTER TABLE runs ADD COLUMN session_id text;
CREATE INDEX runs_session ON runs (session_id, started_at) WHERE session_id IS NOT NULL;
