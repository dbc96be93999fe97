-- runs gain session_id: the conversation a run is a turn of (issue 54), as its telemetry names
-- it (gen_ai.conversation.id, OpenInference's and Langfuse's session.id, LangGraph's thread id...:
-- convert/sessions.py gives the order). NULL when the telemetry names none. A run's turns are
-- the runs of its session in start order (`runs --session`).
ALTER TABLE runs ADD COLUMN session_id VARCHAR;
