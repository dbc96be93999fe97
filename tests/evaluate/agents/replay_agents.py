"""Small deterministic agents for the replay tests (imported by ``--agent replay_agents:NAME``).

The tools answer from ``LIVE_TEMP`` (env ``REPLAY_AGENT_TEMP``, default 21): a replay answered
from the recording reports the recorded temperature, a live tool call the current one.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from shared_tally import SharedCounter, SharedList

import tracereplay
from tracereplay import AgentResult, ToolCallRecord
from tracereplay.sdk import agent_run, tool

#: the tools that ran for real, and the agents' own counts (across agent processes)
LIVE_CALLS = SharedList("live_calls")
_ATTEMPTS = SharedCounter("attempts")


def _temp() -> int:
    return int(os.environ.get("REPLAY_AGENT_TEMP", "21"))


@tool
def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather of a city."""
    LIVE_CALLS.append(("get_weather", {"city": city, "unit": unit}))
    return {"city": city, "temp": _temp(), "unit": unit}


@tool
def get_population(city: str) -> int:
    """Population of a city."""
    LIVE_CALLS.append(("get_population", {"city": city}))
    return 2_100_000


@tool
def get_time(city: str) -> str:
    """Local time in a city."""
    LIVE_CALLS.append(("get_time", {"city": city}))
    return "12:00"


@tool
async def aget_weather(city: str) -> dict[str, Any]:
    """Async weather lookup."""
    LIVE_CALLS.append(("aget_weather", {"city": city}))
    await asyncio.sleep(0)
    return {"city": city, "temp": _temp()}


def city_of(query: str) -> str:
    match = re.search(r"in ([A-Z][a-zA-Z ]+?)\??$", query)
    return match.group(1) if match else "Paris"


def _answer(city: str, weather: Any, population: Any) -> str:
    temp = weather["temp"] if isinstance(weather, dict) else weather
    return f"In {city} it is {temp} degrees; population {population}."


def weather(query: str, context: Any = None, parameters: Any = None) -> str:
    """The reference agent: get_weather then get_population."""
    city = city_of(query)
    return _answer(city, get_weather(city), get_population(city))


def weather_query_only(query: str) -> str:
    """Takes the query alone."""
    return weather(query)


def weather_wrong_unit(query: str) -> str:
    """A code change: asks for fahrenheit (argument drift on get_weather)."""
    city = city_of(query)
    return _answer(city, get_weather(city, unit="fahrenheit"), get_population(city))


def weather_wrong_unit_handled(query: str) -> str:
    """The drifting agent, catching what its tool raised and answering anyway."""
    city = city_of(query)
    try:
        weather_text = get_weather(city, unit="fahrenheit")
    except Exception as exc:
        return f"The weather service failed for {city}: {exc}"
    return _answer(city, weather_text, get_population(city))


def weather_llm_unreachable(query: str) -> str:
    """Asks its model on an endpoint where nothing listens (a replay without the provider)."""
    import socket

    import openai

    with socket.socket() as s:  # a loopback port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": query}]
    )
    return reply.choices[0].message.content or ""


def weather_extra_tool(query: str) -> str:
    """A code change: also asks the time (a call the recording never made)."""
    city = city_of(query)
    w, p = get_weather(city), get_population(city)
    return _answer(city, w, p) + f" Local time {get_time(city)}."


def weather_no_population(query: str) -> str:
    """A code change: forgets the population (a recorded call the replay never makes)."""
    city = city_of(query)
    return _answer(city, get_weather(city), "unknown")


def weather_twice(query: str) -> str:
    """Calls get_weather for the lower-cased city first, then the right one."""
    city = city_of(query)
    get_weather(city.lower())
    return _answer(city, get_weather(city), get_population(city))


@agent_run("weather_agent")
def weather_instrumented(query: str) -> str:
    """An agent that opens its own agent run (as in production code)."""
    return weather(query)


def weather_result(query: str) -> AgentResult:
    """Returns an AgentResult built by the agent itself."""
    city = city_of(query)
    w = get_weather(city)
    p = get_population(city)
    return AgentResult(
        response=_answer(city, w, p),
        tool_calls=[
            ToolCallRecord(round=1, tool_name="get_weather", arguments={"city": city}),
            ToolCallRecord(round=1, tool_name="get_population", arguments={"city": city}),
        ],
        total_rounds=2,
        total_llm_calls=2,
    )


async def weather_async(query: str, *, context: Any = None) -> str:
    """An async agent."""
    city = city_of(query)
    w = await aget_weather(city)
    return f"In {city} it is {w['temp']} degrees."


def hang(query: str) -> str:
    """Never answers in time (a sync call that cannot be cancelled); with
    ``$REPLAY_AGENT_PIDS`` set, writes the process id there first."""
    _note_pid(os.getpid())
    time.sleep(30)
    return "too late"


async def hang_async(query: str) -> str:
    await asyncio.sleep(30)
    return "too late"


def flaky(query: str) -> str:
    """Fails the first time it sees a query, answers the second time."""
    if _ATTEMPTS.bump(query) == 1:
        raise ConnectionError("model endpoint reset the connection")
    return weather(query)


def broken(query: str) -> str:
    raise ValueError("prompt template is missing")


def returns_number(query: str) -> int:
    return 42


def slow(query: str) -> str:
    """Takes a moment per case and leaves a marker file per call (for the Ctrl-C test)."""
    marker_dir = os.environ.get("REPLAY_AGENT_MARKERS")
    if marker_dir:
        Path(marker_dir, f"{time.monotonic_ns()}").touch()
    time.sleep(float(os.environ.get("REPLAY_AGENT_SLEEP", "0.3")))
    return weather(query)


def echo_parameters(query: str, parameters: dict[str, str]) -> str:
    """Answers with the parameters it was given."""
    return f"{query} / customer={parameters.get('customer')}"


def record(db: str, queries: list[str], agent_name: str = "weather_agent") -> None:
    """Run the reference agent live for each query, recorded into the store ``db``."""
    tracereplay.configure(service_name="replay-tests", db=db)
    for q in queries:
        with agent_run(agent_name, q) as run:
            run.set_response(weather(q))
    tracereplay.flush()


def record_async(db: str, queries: list[str]) -> None:
    """Run the async agent live for each query, recorded into the store ``db``."""
    tracereplay.configure(service_name="replay-tests", db=db)

    async def main() -> None:
        for q in queries:
            async with agent_run("weather_agent", q) as run:
                run.set_response(await weather_async(q))

    asyncio.run(main())
    tracereplay.flush()


CALLS = SharedCounter("calls")


def _wrong(query: str) -> str:
    city = city_of(query)
    get_weather(city)
    get_population(city)
    return f"No idea about {city}."


def wrong_answer(query: str) -> str:
    """Calls the right tools but answers wrongly (a FAILED case); counts its calls."""
    CALLS.bump(query)
    return _wrong(query)


def alternating(query: str) -> str:
    """Right on odd calls for a query, wrong on even ones (flaky behaviour for --repeat)."""
    key = "alternating " + query
    return _wrong(query) if CALLS.bump(key) % 2 == 0 else weather(query)


def exits(query: str) -> str:
    """Ends the process its own way for Paris (sys.exit) and Rome (os._exit); answers Oslo."""
    import os
    import sys

    if "Paris" in query:
        sys.exit(4)
    if "Rome" in query:
        os._exit(3)
    return weather(query)


def crashes(query: str) -> str:
    """Crashes the interpreter for Paris (a segmentation fault in native code) and aborts it
    for Rome (``abort()``, as a failed C assertion does); answers Oslo."""
    import ctypes
    import os

    if "Paris" in query:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    if "Rome" in query:
        os.abort()
    return weather(query)


def crashes_leaving_a_child(query: str) -> str:
    """For Paris: forks a child (which inherits the process's pipe to the eval and outlives it)
    and then crashes; with ``$REPLAY_AGENT_PIDS`` the child's pid is written there."""
    import ctypes

    if "Paris" in query:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        _note_pid(pid)
        ctypes.string_at(0)
    return weather(query)


def crashes_after_a_while(query: str) -> str:
    """``crashes``, Paris and Rome 0.3 s in, Oslo's answer 1.3 s in: cases run at once are all
    still running when the first crashes (with the same delay, Oslo's answer could reach the
    eval first); with ``$REPLAY_AGENT_PIDS`` each case writes its process id there first."""
    _note_pid(os.getpid())
    time.sleep(0.3 if "Paris" in query or "Rome" in query else 1.3)
    return crashes(query)


def weather_taking_a_while(query: str) -> str:
    """``weather``, each case 50 ms of the agent's own work; with ``$REPLAY_AGENT_PIDS`` each
    case writes its process id there first."""
    _note_pid(os.getpid())
    end = time.process_time() + 0.05
    while time.process_time() < end:  # the CPU a case takes, which a second core shares
        pass
    return weather(query)


#: how many cases were running (across agent processes) as each case started
RUNNING_AT_START = SharedList("running_at_start")


def weather_counting_overlap(query: str) -> str:
    """``weather`` after ``$REPLAY_AGENT_SLEEP`` seconds (default 0.05) in which the case
    holds a marker file in ``$REPLAY_AGENT_STATE/running``: as it starts, each case notes how
    many markers there are, the cases running at that moment (``RUNNING_AT_START``)."""
    running = Path(os.environ["REPLAY_AGENT_STATE"], "running")
    running.mkdir(parents=True, exist_ok=True)
    mine = running / f"{os.getpid()}-{threading.get_ident()}"
    mine.touch()
    try:
        RUNNING_AT_START.append(len(os.listdir(running)))
        time.sleep(float(os.environ.get("REPLAY_AGENT_SLEEP", "0.05")))
    finally:
        mine.unlink()
    return weather(query)


def _note_pid(pid: int) -> None:
    """Append ``pid`` to ``$REPLAY_AGENT_PIDS`` when the test set it (which processes ran)."""
    pids = os.environ.get("REPLAY_AGENT_PIDS")
    if pids:
        with open(pids, "a") as f:
            f.write(f"{pid}\n")
