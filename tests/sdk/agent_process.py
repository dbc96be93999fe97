"""An agent process for the multi-process test: ``python agent_process.py DB NAME RUNS``.

Each run: one LLM call asking for two tools, the tools, a final LLM call. Prints its run ids.
"""

from __future__ import annotations

import sys
import time

import tracereplay


@tracereplay.tool
def get_weather(city: str) -> str:
    return f"sunny in {city}"


@tracereplay.tool
def get_time(city: str) -> str:
    return "12:00"


def main(db: str, name: str, runs: int) -> None:
    tracereplay.configure(service_name=name, db=db)
    for i in range(runs):
        city = f"{name}-city-{i}"
        with tracereplay.agent_run(name, f"Weather and time in {city}?") as run:
            with run.llm_call(model="scripted") as llm:
                llm.set_output(
                    tool_calls=[
                        {"id": f"w{i}", "name": "get_weather", "arguments": {"city": city}},
                        {"id": f"t{i}", "name": "get_time", "arguments": {"city": city}},
                    ]
                )
            answer = f"{get_weather(city)} at {get_time(city)}"
            with run.llm_call(model="scripted") as llm:
                llm.set_output(answer)
            run.set_response(answer)
            print(run.run_id, flush=True)
        time.sleep(0.12)
    # no flush(): spans still queued are written at interpreter exit


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
