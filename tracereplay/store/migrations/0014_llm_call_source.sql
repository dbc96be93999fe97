-- llm_calls gains source: what answered a replay run's LLM call (issue 50): 'recording' (the
-- recorded call's answer), 'live' (a model: a live replay, or past the --llm-until fork) or
-- 'refused' (nothing recorded matched: the replay answered with an error). Every call a replay
-- makes is kept, whether or not the agent's LLM client is instrumented. NULL in production runs.
ALTER TABLE llm_calls ADD COLUMN source VARCHAR;
