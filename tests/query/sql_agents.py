"""A replay agent for the SQL and report tests (``--agent sql_agents:flaky``, PYTHONPATH=here).

Run with ``--repeat 2 --concurrency 1``: every even call answers like the recording (the
reference response, the recorded tool arguments); every odd call drifts (``city`` lower-cased)
and answers with markup that a report must show as text, never run.
"""

from __future__ import annotations

import itertools
from typing import Any

from tracereplay.sdk import tool

REFERENCE = (
    "In San Francisco it is foggy and 14 °C. "
    "I could not get the population: the population service timed out."
)
HOSTILE = (
    "<script>document.title='pwned'</script>"
    "<img src=x onerror=\"document.title='pwned'\"> & the drifted answer"
)

_calls = itertools.count()


@tool
def get_weather(city: str) -> Any:
    """Weather of a city (answered from the recording in replay)."""
    return {"city": city, "weather": "sunny", "temperature_c": 30}


@tool
def get_population(city: str) -> Any:
    """Population of a city (answered from the recording in replay)."""
    return 1


def flaky(query: str) -> str:
    """Alternates between the recorded behaviour and argument drift."""
    faithful = next(_calls) % 2 == 0
    for fn, city in ((get_weather, "San Francisco" if faithful else "san francisco"),
                     (get_population, "San Francisco")):  # fmt: skip
        try:
            fn(city)
        except Exception:  # the recorded call failed: so does the replayed one
            pass
    return REFERENCE if faithful else HOSTILE
