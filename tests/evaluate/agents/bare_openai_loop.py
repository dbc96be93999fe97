"""The example weather agent's loop with no LLM instrumentation at all: the OpenAI client called
directly (no ``llm_call``, no instrumentor), its tools the example's ``@tracereplay.tool``
functions. What a replay run of it holds of its LLM calls comes from the replay itself."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from openai import OpenAI

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "weather_agent"
sys.path.insert(0, str(EXAMPLE))
from openai_agent import MODEL, NEW_MODEL, SYSTEM  # noqa: E402
from tools import TOOL_SCHEMAS, TOOLS  # noqa: E402


def answer(query: str, model: str = MODEL) -> str:
    """The recorded agent's loop, told apart from it only by its telemetry."""
    client = OpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY") or "unused",
        max_retries=0,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": query},
    ]
    for _ in range(4):
        completion = client.chat.completions.create(
            model=model, messages=messages, tools=TOOL_SCHEMAS, temperature=0.0, max_tokens=400
        )
        message = completion.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            fn = call.function
            try:
                content = json.dumps(TOOLS[fn.name](**json.loads(fn.arguments)))
            except (LookupError, ValueError) as exc:
                content = f"error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return "no answer in 4 rounds"


def answer_v2(query: str) -> str:
    """The loop on the next model version."""
    return answer(query, NEW_MODEL)
