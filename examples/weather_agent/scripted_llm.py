"""A deterministic stand-in for a chat model: no network, same answer every time.

It reads OpenAI-style messages and answers with OpenAI-style chat completions (dicts), asking for
tools the way a real model would: current weather for every city in the question, then a
forecast if one is asked for, then Fahrenheit conversions, then a final answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

CITIES = ("Paris", "Tokyo", "London", "Oslo", "Atlantis")


class ProviderError(RuntimeError):
    """The model provider failed (the scripted LLM simulates an outage)."""


def _calls_and_results(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result text) of every tool call answered so far."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}
    out = []
    for message in messages:
        for call in message.get("tool_calls") or ():
            fn = call["function"]
            out.append((fn["name"], json.loads(fn["arguments"]), results.get(call["id"], "")))
    return out


class ScriptedLLM:
    """``complete(messages)`` -> an OpenAI-style chat completion dict.

    ``fail_on_call=N`` makes the N-th call raise ``ProviderError`` (a provider outage).
    """

    model = "scripted-weather-1"

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.fail_on_call = fail_on_call
        self.calls = 0

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise ProviderError("503 Service Unavailable: the model provider is overloaded")
        query = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        done = _calls_and_results(messages)
        wanted = self._next_tool_calls(query, done)
        if wanted:
            calls = [
                {
                    "id": f"call_{self.calls}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(wanted)
            ]
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
            return self._completion(message, "tool_calls", messages, 12 * len(calls))
        answer = self._answer(done)
        message = {"role": "assistant", "content": answer}
        return self._completion(message, "stop", messages, len(answer) // 4)

    # ------------------------------------------------------------------ the script
    @staticmethod
    def _next_tool_calls(
        query: str, done: list[tuple[str, dict[str, Any], str]]
    ) -> list[tuple[str, dict[str, Any]]]:
        lowered = query.lower()
        cities = [c for c in CITIES if c.lower() in lowered]
        asked = {(name, json.dumps(args, sort_keys=True)) for name, args, _ in done}
        if "monitor" in lowered:  # never satisfied: keeps asking for fresh readings
            return [("get_weather", {"city": cities[0] if cities else "Paris"})]
        weather = [("get_weather", {"city": c}) for c in cities]
        todo = [w for w in weather if (w[0], json.dumps(w[1], sort_keys=True)) not in asked]
        if todo:
            return todo
        if "forecast" in lowered and not any(name == "get_forecast" for name, _, _ in done):
            days = int(m.group(1)) if (m := re.search(r"(\d+)[- ]day", lowered)) else 3
            before = lowered.split("forecast")[1]
            target = next((c for c in cities if c.lower() in before), cities[-1])
            return [("get_forecast", {"city": target, "days": days})]
        if "fahrenheit" in lowered and not any(n == "convert_temperature" for n, _, _ in done):
            temps = [
                day["temperature_c"]
                for name, _, result in done
                if name == "get_forecast" and not result.startswith("error")
                for day in json.loads(result)
            ]
            return [("convert_temperature", {"celsius": t, "unit": "F"}) for t in temps]
        return []

    @staticmethod
    def _answer(done: list[tuple[str, dict[str, Any], str]]) -> str:
        parts = []
        fahrenheit = [r for n, _, r in done if n == "convert_temperature"]
        for name, args, result in done:
            if result.startswith("error"):
                what = {"get_weather": "the weather", "get_forecast": "a forecast"}.get(name, name)
                parts.append(f"I could not get {what} for {args.get('city')}: {result[7:]}.")
            elif name == "get_weather":
                w = json.loads(result)
                parts.append(f"{w['city']}: {w['conditions']}, {w['temperature_c']} °C.")
            elif name == "get_forecast":
                days = json.loads(result)
                temps = [
                    f"{d['temperature_c']} °C"
                    + (f" ({fahrenheit[i]} °F)" if i < len(fahrenheit) else "")
                    for i, d in enumerate(days)
                ]
                parts.append(f"{args['city']} forecast: " + ", ".join(temps) + ".")
        return " ".join(dict.fromkeys(parts)) or "I have no weather information for that."

    def _completion(
        self, message: dict[str, Any], finish_reason: str, messages: list[dict[str, Any]], out: int
    ) -> dict[str, Any]:
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 40
        return {
            "id": f"scripted-{self.calls}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": out,
                "total_tokens": prompt + out,
            },
        }
