"""Offline replay: the agent's LLM calls answered from the recording (``--llm recorded``).

- ``recording``: the recorded calls of a source run (and the runs nested under it), with what
  they were asked (model, temperature, tools offered) and what they answered;
- ``canonical``: one comparable form for a request of any API and for a recorded call's
  messages, and the readable diff of prompt drift;
- ``endpoints``: which LLM API a request calls (and the model and stream its URL names);
- ``wire``: a recorded answer rebuilt as an OpenAI Chat Completions, OpenAI Responses,
  Anthropic Messages, Gemini, Bedrock Converse or Cohere v2 chat response (JSON, or the API's
  stream: server-sent events, Bedrock's eventstream frames);
- ``interceptor``: ``RecordedLlm`` (matching, drift, errors of one case) and ``decide``, what
  the HTTP hooks (``httpx_hook``, ``urllib3_hook``, ``aiohttp_hook``) do with a request in a
  replay's context;
- ``noted_calls``: every LLM call a replay makes kept as a ``chat`` span of its replay run,
  with what answered it (the recording, a live model, or a refusal);
- ``sent_results``: the tool results an agent sends its model, counted per tool (the airtight
  check of plain loops).
"""

from tracereplay.replay.answering.llm.interceptor import (
    LLM_MATCHES,
    LLM_MODES,
    LlmMatch,
    LlmMode,
    OfflineRequestError,
    RecordedLlm,
    answering,
    install,
    keeping_calls,
    live_llm,
    llm_error_reason,
    watching_tool_results,
)
from tracereplay.replay.answering.llm.recording import RecordedCall, load_llm_recordings

__all__ = [
    "LLM_MATCHES",
    "LLM_MODES",
    "LlmMatch",
    "LlmMode",
    "OfflineRequestError",
    "RecordedCall",
    "RecordedLlm",
    "answering",
    "install",
    "keeping_calls",
    "live_llm",
    "llm_error_reason",
    "load_llm_recordings",
    "watching_tool_results",
]
