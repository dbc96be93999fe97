-- Sessions (issue 54).
-- runs gain session_id: the conversation a run is a turn of, as its telemetry names it
-- (gen_ai.conversation.id, OpenInference's and Langfuse's session.id, LangGraph's thread id...:
-- convert/sessions.py gives the order). NULL when the telemetry names none. A run's turns are
-- the runs of its session in start order (`runs --session`).
ALTER TABLE runs ADD COLUMN session_id VARCHAR;
-- eval_cases gain history: the conversation before the case's query, [{"role", "content"}]
-- (a promoted turn's earlier turns). NULL: none.
ALTER TABLE eval_cases ADD COLUMN history JSON;
