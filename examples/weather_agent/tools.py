"""The weather agent's tools: deterministic data, instrumented with ``@tracereplay.tool``."""

from __future__ import annotations

from typing import Any

import tracereplay

WEATHER: dict[str, dict[str, Any]] = {
    "paris": {"city": "Paris", "conditions": "light rain", "temperature_c": 12},
    "tokyo": {"city": "Tokyo", "conditions": "sunny", "temperature_c": 21},
    "london": {"city": "London", "conditions": "overcast", "temperature_c": 10},
    "oslo": {"city": "Oslo", "conditions": "snow", "temperature_c": -3},
}
FORECAST_DELTAS = (0, 2, -1, 3, 1)


class CityNotFound(LookupError):
    """The weather service knows no such city."""


@tracereplay.tool
def get_weather(city: str) -> dict[str, Any]:
    """Current conditions and temperature (°C) in a city."""
    try:
        return dict(WEATHER[city.lower()])
    except KeyError:
        raise CityNotFound(f"no weather station for {city!r}") from None


@tracereplay.tool
def get_forecast(city: str, days: int = 3) -> list[dict[str, Any]]:
    """Daily forecast (°C) for the next few days."""
    today = get_weather.__wrapped__(city)  # the data, without a nested tool span
    return [
        {"day": i + 1, "temperature_c": today["temperature_c"] + FORECAST_DELTAS[i % 5]}
        for i in range(days)
    ]


@tracereplay.tool
def convert_temperature(celsius: float, unit: str = "F") -> float:
    """Convert a Celsius temperature to Fahrenheit (F) or Kelvin (K)."""
    if unit.upper() == "F":
        return round(celsius * 9 / 5 + 32, 1)
    if unit.upper() == "K":
        return round(celsius + 273.15, 2)
    raise ValueError(f"unknown unit {unit!r}")


TOOLS = {f.__name__: f for f in (get_weather, get_forecast, convert_temperature)}

TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current conditions and temperature (°C) in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_forecast",
            "description": "Daily forecast (°C) for the next few days.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_temperature",
            "description": "Convert a Celsius temperature to Fahrenheit (F) or Kelvin (K).",
            "parameters": {
                "type": "object",
                "properties": {"celsius": {"type": "number"}, "unit": {"type": "string"}},
                "required": ["celsius"],
            },
        },
    },
]
