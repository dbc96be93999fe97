-- llm_calls gains source: what answered a replay run's LLM call (migrations/0014_llm_call_source.sql
-- says more).
ALTER TABLE llm_calls ADD COLUMN source text;
