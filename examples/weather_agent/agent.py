"""A small tool-calling agent loop, instrumented with the tracereplay SDK.

One LLM call per round; the tools the model asks for run (through ``@tracereplay.tool``) and their
results, or errors, go back to the model; the run stops when the model answers without tool
calls, or as ``max_rounds_exceeded`` when it still wants tools after ``max_rounds`` rounds.
"""

from __future__ import annotations

import json
from typing import Any

from scripted_llm import ScriptedLLM
from tools import TOOL_SCHEMAS, TOOLS

import tracereplay
from tracereplay import AgentResult

SYSTEM = "You are a weather assistant. Use the tools; answer in one short paragraph."


def run_agent(
    query: str,
    llm: ScriptedLLM,
    *,
    max_rounds: int = 4,
    context: list[dict[str, str]] | None = None,
) -> tuple[str, AgentResult]:
    """Answer ``query``; returns (run id, result). Exceptions (a provider outage) propagate."""
    with tracereplay.agent_run(
        "weather_agent",
        query,
        context=context,
        parameters={"model": llm.model, "max_rounds": max_rounds},
    ) as run:
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        for doc in context or ():
            messages.append({"role": "system", "content": f"[{doc['name']}]\n{doc['content']}"})
        messages.append({"role": "user", "content": query})
        result = AgentResult()
        for _ in range(max_rounds):
            with run.llm_call(
                model=llm.model, messages=messages, provider="scripted", tools=TOOL_SCHEMAS
            ) as call:
                completion = llm.complete(messages)
                call.set_openai_response(completion)
            result.total_llm_calls += 1
            result.total_rounds += 1
            message = completion["choices"][0]["message"]
            if not message.get("tool_calls"):
                result.response = message["content"]
                run.set_response(result.response)
                return run.run_id, result
            messages.append(message)
            for call_request in message["tool_calls"]:
                fn = call_request["function"]
                try:
                    output = TOOLS[fn["name"]](**json.loads(fn["arguments"]))
                    content = json.dumps(output)
                except (LookupError, ValueError) as exc:  # a tool error goes back to the model
                    content = f"error: {exc}"
                messages.append(
                    {"role": "tool", "tool_call_id": call_request["id"], "content": content}
                )
        result.status = "max_rounds_exceeded"
        result.response = "I am still gathering data; please ask again later."
        run.set_response(result.response)
        run.mark_max_rounds_exceeded()
        return run.run_id, result
