"""Run the weather agent a few times into a tracereplay store (embedded default, no server).

    python examples/weather_agent/demo.py --db demo-work/tracereplay.duckdb
    tracereplay --db demo-work/tracereplay.duckdb runs

Five runs: a one-round answer, a tool error the agent recovers from, a provider outage (the run
fails), a run that hits its round limit, and last a several-round run (weather for two cities,
a forecast, conversions). ``--run-id-file`` saves that last run's id for ``tracereplay show``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent import run_agent
from scripted_llm import ProviderError, ScriptedLLM

import tracereplay

TRAVEL_NOTE = {
    "name": "travel_note",
    "content": "The user flies to Tokyo on Friday and prefers Fahrenheit.",
}

SCENARIOS = [
    ("What's the weather in Paris?", {}),
    ("Is it raining in Atlantis?", {}),
    ("What's the weather in London?", {"fail_on_call": 2}),
    ("Monitor the weather in Oslo until the snow stops.", {"max_rounds": 3}),
    (
        "Compare the weather in Paris and Tokyo, and give me a 3-day forecast for Tokyo in Fahrenheit.",
        {"context": [TRAVEL_NOTE]},
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--db", help="DuckDB file (default: $TRACEREPLAY_DB or ./tracereplay.duckdb)"
    )
    parser.add_argument(
        "--run-id-file", type=Path, help="write the last (multi-round) run's id here"
    )
    args = parser.parse_args(argv)

    tracereplay.configure(service_name="weather-agent-demo", db=args.db)
    run_id = ""
    for i, (query, options) in enumerate(SCENARIOS, start=1):
        llm = ScriptedLLM(fail_on_call=options.get("fail_on_call"))
        try:
            run_id, result = run_agent(
                query,
                llm,
                max_rounds=options.get("max_rounds", 4),
                context=options.get("context"),
            )
        except ProviderError as exc:
            print(f"run {i}: {'failed':<19} {exc}")
            continue
        print(
            f"run {i}: {result.status:<19} {result.total_llm_calls} LLM calls  "
            f"{run_id}  {result.response[:70]}"
        )
    tracereplay.flush()
    if args.run_id_file:
        args.run_id_file.write_text(run_id + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
