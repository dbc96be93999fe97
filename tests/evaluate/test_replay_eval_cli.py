"""``tracereplay eval SUITE --agent module:callable``: replay with tools answered from the recording."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_fixtures import AGENTS, CITIES, cli, eval_json, make_suite, query, replay_agents, rows


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(AGENTS)  # --agent modules are imported from the current directory
    monkeypatch.delenv("REPLAY_AGENT_TEMP", raising=False)
    path = tmp_path / "store.duckdb"
    make_suite(path, CITIES[:2])
    replay_agents.LIVE_CALLS.clear()
    return path


@pytest.mark.parametrize("where", [[], ["--in-process"]], ids=["agent-processes", "in-process"])
def test_replay_answers_tools_from_the_recording_and_stores_linked_replay_runs(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: list[str]
) -> None:
    monkeypatch.setenv("REPLAY_AGENT_TEMP", "99")  # a live tool would now answer 99
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather", *where, exit_code=0
    )
    assert replay_agents.LIVE_CALLS == []  # every tool call came from the recording
    run = doc["eval_run"]
    assert run["mode"] == "replay" and run["agent"] == "replay_agents:weather"
    assert run["passed"] == 2 and run["status"] == "completed" and run["pass_rate"] == 1.0
    for case in doc["cases"]:
        [rep] = case["repetitions"]
        assert "21 degrees" in rep["response"]
        assert [t["tool_name"] for t in rep["tool_calls"]] == ["get_weather", "get_population"]
        assert rep["replay"]["answered"] == 2 and rep["replay"]["unused"] == []
    linked = rows(
        db,
        "SELECT r.kind, r.eval_run_id, r.case_id, c.case_id AS scored_case FROM case_results c"
        " JOIN runs r ON r.run_id = c.run_id WHERE c.eval_run_id = ?",
        [run["eval_run_id"]],
    )
    assert len(linked) == 2
    for row in linked:
        assert row["kind"] == "replay" and row["eval_run_id"] == run["eval_run_id"]
        assert row["case_id"] == row["scored_case"]


def test_strict_drift_fails_the_case_and_the_checks_judge_what_happened(
    db: Path, tmp_path: Path
) -> None:
    """The agent did something other than expected (a changed tool call): FAILED, not ERROR,
    with the checks run on the replay it made (it ended in the unanswered call's exception)."""
    result = cli(db, "eval", "weather", "--agent", "replay_agents:weather_wrong_unit")
    assert result.exit_code == 1, result.output
    assert "no recording for tool call" in result.stdout
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather_wrong_unit")
    for case in doc["cases"]:
        assert case["status"] == "FAILED"
        assert case["reason"].startswith("replay: no recording for tool call get_weather(")
        assert '"unit":"fahrenheit"' in case["reason"]
        checks = {c["check"]: c for c in case["checks"]}
        assert checks["replay"]["status"] == "FAILED" and checks["replay"]["score"] == 0.0
        assert checks["status"]["status"] == "FAILED"  # the run ended in that exception
        assert {"containsExpected", "toolCallArgsMatch"} <= set(checks)
        [rep] = case["repetitions"]
        assert [t["tool_name"] for t in rep["tool_calls"]] == ["get_weather"]
        [drift] = rep["replay"]["drift"]
        assert drift["tool"] == "get_weather" and drift["answered"] is False
        assert drift["recorded_arguments"] == {"city": case["query"].split()[-1].rstrip("?")}


def test_a_drifting_agent_that_handles_the_unanswered_call_still_fails(
    db: Path, tmp_path: Path
) -> None:
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather_wrong_unit_handled",
        exit_code=1,
    )  # fmt: skip
    for case in doc["cases"]:
        assert case["status"] == "FAILED"
        checks = {c["check"]: c["status"] for c in case["checks"]}
        assert checks["replay"] == "FAILED" and checks["status"] == "PASSED"
        assert "21 degrees" not in case["repetitions"][0]["response"]


def test_an_unreachable_llm_is_an_error_that_points_at_llm_recorded(
    db: Path, tmp_path: Path
) -> None:
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather_llm_unreachable")
    for case in doc["cases"]:
        assert case["status"] == "ERROR"
        assert case["reason"].startswith("the agent raised APIConnectionError: ")
        assert "could not reach its LLM" in case["reason"]
        assert "--llm recorded" in case["reason"]


def test_fifo_answers_drifted_calls_and_reports_the_drift(db: Path, tmp_path: Path) -> None:
    doc = eval_json(
        db,
        tmp_path,
        "weather",
        "--agent",
        "replay_agents:weather_wrong_unit",
        "--tool-match",
        "fifo",
        exit_code=0,  # expected tool calls match as argument subsets: the extra unit is fine
    )
    for case in doc["cases"]:
        replay = case["repetitions"][0]["replay"]
        assert replay["tool_match"] == "fifo"
        [drift] = replay["drift"]
        assert drift["answered"] is True and drift["arguments"]["unit"] == "fahrenheit"
        assert any("unit" in d for d in drift["differences"])
    stored = rows(db, "SELECT drift FROM case_results WHERE drift IS NOT NULL")
    assert any('"fahrenheit"' in r["drift"] for r in stored)


def test_unused_recorded_calls_are_reported_and_fail_the_checks(db: Path, tmp_path: Path) -> None:
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather_no_population", exit_code=1
    )
    for case in doc["cases"]:
        assert case["status"] == "FAILED"
        unused = case["repetitions"][0]["replay"]["unused"]
        assert [u["tool"] for u in unused] == ["get_population"]


def test_an_unrecorded_tool_fails_the_case_unless_live_tools(db: Path, tmp_path: Path) -> None:
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather_extra_tool")
    assert {c["status"] for c in doc["cases"]} == {"FAILED"}
    assert all("get_time" in c["reason"] for c in doc["cases"])
    assert replay_agents.LIVE_CALLS == []
    doc = eval_json(
        db,
        tmp_path,
        "weather",
        "--agent",
        "replay_agents:weather_extra_tool",
        "--live-tools",
        exit_code=0,
    )
    assert [name for name, _ in replay_agents.LIVE_CALLS] == ["get_time", "get_time"]
    assert all(c["repetitions"][0]["replay"]["unanswered"][0]["live"] for c in doc["cases"])


def test_hand_written_cases_run_tools_live_only_with_live_tools(db: Path, tmp_path: Path) -> None:
    added = cli(
        db, "case", "add", "--suite", "weather", "--query", query("Lima"),
        "--expected-output", "Lima",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather")
    [hand] = [c for c in doc["cases"] if "Lima" in c["query"]]
    assert hand["status"] == "ERROR" and "no source run" in hand["reason"]
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather", "--live-tools")
    [hand] = [c for c in doc["cases"] if "Lima" in c["query"]]
    assert hand["status"] == "PASSED", hand["reason"]
    assert ("get_weather", {"city": "Lima", "unit": "celsius"}) in replay_agents.LIVE_CALLS
    others = [c for c in doc["cases"] if "Lima" not in c["query"]]
    assert all(c["repetitions"][0]["replay"]["unanswered"] == [] for c in others)


@pytest.mark.parametrize(
    "agent", ["weather_instrumented", "weather_query_only", "weather_result", "weather_twice"]
)
def test_agent_shapes_are_all_replayed_as_one_run_per_case(
    db: Path, tmp_path: Path, agent: str
) -> None:
    args = ["--tool-match", "fifo"] if agent == "weather_twice" else []
    doc = eval_json(db, tmp_path, "weather", "--agent", f"replay_agents:{agent}", *args)
    run_id = doc["eval_run"]["eval_run_id"]
    replays = rows(db, "SELECT run_id, parent_run_id FROM runs WHERE eval_run_id = ?", [run_id])
    assert len(replays) == 2 and all(r["parent_run_id"] is None for r in replays)
    if agent == "weather_twice":  # fifo gives the lower-cased call the one recording ...
        assert {c["status"] for c in doc["cases"]} == {"FAILED"}  # an extra call
        assert all("used every one" in c["reason"] for c in doc["cases"])  # ... none is left
        assert all(c["repetitions"][0]["replay"]["drift"] for c in doc["cases"])
    else:
        assert {c["status"] for c in doc["cases"]} == {"PASSED"}, doc["cases"][0]["reason"]


def test_async_agent_with_async_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "async.duckdb"
    make_suite(db, CITIES[:2], agent="weather_async")
    monkeypatch.setenv("REPLAY_AGENT_TEMP", "99")
    replay_agents.LIVE_CALLS.clear()
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:weather_async", exit_code=0)
    assert replay_agents.LIVE_CALLS == []
    assert all("21 degrees" in c["repetitions"][0]["response"] for c in doc["cases"])


def test_an_agent_that_raises_where_its_source_run_did_not_fails(db: Path, tmp_path: Path) -> None:
    """The agent's own exception is its behaviour (its source run answered): FAILED for it,
    the other checks judging the failed run it made (no retry: a FAILED case is a verdict)."""
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:broken", "--retries", "2", exit_code=1
    )
    for case in doc["cases"]:
        assert case["status"] == "FAILED"
        assert case["reason"].startswith(
            "replay: the agent raised ValueError: prompt template is missing"
        )
        checks = {c["check"]: c["status"] for c in case["checks"]}
        assert checks["replay"] == "FAILED" and checks["status"] == "FAILED"
        assert case["repetitions"][0]["attempts"] == 1  # not retried


def test_an_agent_whose_value_cannot_be_read_makes_the_case_an_error(
    db: Path, tmp_path: Path
) -> None:
    doc = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:returns_number", exit_code=1)
    assert {c["status"] for c in doc["cases"]} == {"ERROR"}
    assert all("the agent returned int" in c["reason"] for c in doc["cases"])


def test_missing_required_parameters_are_errors_before_anything_runs(
    db: Path, tmp_path: Path
) -> None:
    created = cli(db, "suite", "create", "support", "--require-param", "customer")
    assert created.exit_code == 0, created.output
    for args in (["-p", "customer=ada"], []):
        added = cli(db, "case", "add", "--suite", "support", "--query", "Where is my order?", *args)
        assert added.exit_code == 0, added.output
    out = tmp_path / "support.json"
    result = cli(
        db, "eval", "support", "--agent", "replay_agents:echo_parameters", "--live-tools",
        "--json", str(out),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    import json

    cases = {c["seq"]: c for c in json.loads(out.read_text())["cases"]}
    assert cases[1]["status"] == "ERROR"
    assert "{{customer}}" in cases[1]["reason"] and "nothing was run" in cases[1]["reason"]
    assert cases[1]["repetitions"][0]["run_id"] is None  # the agent was never called
    assert cases[0]["repetitions"][0]["response"] == "Where is my order? / customer=ada"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "no_such_module:run"], "no module named 'no_such_module'"),
        (["--agent", "replay_agents:nothing"], "has no 'nothing'"),
        (["--agent", "replay_agents"], "module:callable"),
        (["--live-tools"], "add --agent"),
        (["--tool-match", "fifo"], "add --agent"),
    ],
)
def test_bad_agent_options_are_usage_errors(db: Path, args: list[str], message: str) -> None:
    result = cli(db, "eval", "weather", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert rows(db, "SELECT count(*) AS n FROM eval_runs")[0]["n"] == 0
