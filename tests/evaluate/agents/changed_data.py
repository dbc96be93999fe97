"""The example weather agent on the OpenAI client, after its weather service's data changed:
every temperature is 2 °C higher than when the runs were recorded (a live tool now answers
differently from the recording)."""

from __future__ import annotations

import tools
from openai_agent import answer

for _station in tools.WEATHER.values():
    _station["temperature_c"] += 2

__all__ = ["answer"]
