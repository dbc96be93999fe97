"""The weather agent on a real model client: the OpenAI Python client at ``$OPENAI_BASE_URL``.

The same loop as ``agent.py`` (same tools, same SDK instrumentation: ``agent_run``,
``llm_call`` with the request's settings, ``set_openai_response``), but the model is whatever
OpenAI-compatible API ``$OPENAI_BASE_URL`` names, with ``$OPENAI_API_KEY``. It is what offline
replay is for: ``tracereplay eval SUITE --agent openai_agent:answer --llm recorded`` answers
every model call from the recording, with no network and no API key.

    python examples/weather_agent/openai_agent.py --db demo-work/tracereplay.duckdb  # record
    tracereplay eval weather-offline --agent openai_agent:answer --llm recorded     # offline
    tracereplay eval weather-offline --agent openai_agent:answer_v2                 # new model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tools import TOOL_SCHEMAS, TOOLS, CityNotFound  # noqa: E402

import tracereplay  # noqa: E402
from tracereplay import AgentResult, Document  # noqa: E402

AGENT = "weather_openai"
SYSTEM = "You are a weather assistant. Use the tools; answer in one short paragraph."
MODEL = "scripted-weather-1"
NEW_MODEL = "scripted-weather-2"
QUERIES = [
    "What's the weather in Paris?",
    "Is it raining in Atlantis?",
    "Compare the weather in Paris and Tokyo, and give me a 3-day forecast for Tokyo.",
]


def _client() -> Any:
    from openai import OpenAI

    return OpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY") or "unused",  # offline replay needs none
        max_retries=0,
    )


def run_agent(
    query: str, model: str = MODEL, max_rounds: int = 4, *, own_city_errors: bool = False
) -> AgentResult:
    """Answer ``query`` with ``model``; one LLM call per round, tools through the SDK.
    ``own_city_errors``: a city no station knows is answered by the agent itself, not left to
    the model (which tells the user about weather stations)."""
    client = _client()
    settings = {"temperature": 0.0, "max_tokens": 400}
    with tracereplay.agent_run(AGENT, query, parameters={"model": model}) as run:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": query},
        ]
        result = AgentResult()
        for _ in range(max_rounds):
            with run.llm_call(
                model=model, messages=messages, provider="openai", tools=TOOL_SCHEMAS
            ) as call:
                call.set_parameters(**settings)
                completion = client.chat.completions.create(
                    model=model, messages=messages, tools=TOOL_SCHEMAS, **settings
                )
                call.set_openai_response(completion)
            result.total_llm_calls += 1
            result.total_rounds += 1
            message = completion.choices[0].message
            if not message.tool_calls:
                result.response = message.content or ""
                run.set_response(result.response)
                return result
            messages.append(message.model_dump(exclude_none=True))
            for tool_call in message.tool_calls:
                fn = tool_call.function
                try:
                    content = json.dumps(TOOLS[fn.name](**json.loads(fn.arguments)))
                except (LookupError, ValueError) as exc:  # a tool error goes back to the model
                    if own_city_errors and isinstance(exc, CityNotFound):
                        city = json.loads(fn.arguments).get("city", "")
                        result.response = f"There is no city called {city} that I know of."
                        run.set_response(result.response)
                        return result
                    content = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": content})
        result.status = "max_rounds_exceeded"
        run.mark_max_rounds_exceeded()
        return result


def answer(query: str, context: list[Document] | None = None) -> AgentResult:
    """The agent as recorded."""
    return run_agent(query)


def answer_v2(query: str, context: list[Document] | None = None) -> AgentResult:
    """The agent switched to the next model version (its forecasts are for 5 days)."""
    return run_agent(query, NEW_MODEL)


def answer_fixed(query: str, context: list[Document] | None = None) -> AgentResult:
    """The agent after the fix of docs/promoting.md's walkthrough: it answers an unknown city
    itself."""
    return run_agent(query, own_city_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record the OpenAI-client weather agent.")
    parser.add_argument(
        "--db", help="DuckDB file (default: $TRACEREPLAY_DB or ./tracereplay.duckdb)"
    )
    args = parser.parse_args(argv)
    tracereplay.configure(service_name="weather-agent-openai", db=args.db)
    for i, query in enumerate(QUERIES, start=1):
        result = answer(query)
        print(
            f"run {i}: {result.status:<8} {result.total_llm_calls} LLM calls  {result.response[:70]}"
        )
    tracereplay.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
