"""The weather agent as ``tracereplay eval --agent`` calls it, before and after a change.

    tracereplay eval weather-regressions --agent eval_agent:answer     # the agent as recorded
    tracereplay eval weather-regressions --agent eval_agent:answer_v2  # after the change

``answer_v2`` is the same agent after a code change that switches it to the next model version,
``scripted-weather-2``, which asks ``get_forecast`` for 5 days where the recorded runs asked for
3: one tool call breaks. Replay answers every other tool call from the recording, so only the
case with a forecast regresses. (The model itself is scripted, so the demo needs no network.)
"""

from __future__ import annotations

from typing import Any

from agent import run_agent
from scripted_llm import ScriptedLLM

from tracereplay import AgentResult, Document


class ScriptedLLMv2(ScriptedLLM):
    """The next model version: same behaviour, except its forecasts are for 5 days."""

    model = "scripted-weather-2"

    @staticmethod
    def _next_tool_calls(
        query: str, done: list[tuple[str, dict[str, Any], str]]
    ) -> list[tuple[str, dict[str, Any]]]:
        wanted = ScriptedLLM._next_tool_calls(query, done)
        return [(n, {**a, "days": 5}) if n == "get_forecast" else (n, a) for n, a in wanted]


def _documents(context: list[Document] | None) -> list[dict[str, str]]:
    return [{"name": d.name, "content": d.content} for d in context or ()]


def answer(query: str, context: list[Document] | None = None) -> AgentResult:
    """The agent as deployed when the runs were recorded."""
    _, result = run_agent(query, ScriptedLLM(), context=_documents(context))
    return result


def answer_v2(query: str, context: list[Document] | None = None) -> AgentResult:
    """The agent after the model upgrade."""
    _, result = run_agent(query, ScriptedLLMv2(), context=_documents(context))
    return result
