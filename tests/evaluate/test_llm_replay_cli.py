"""``tracereplay eval --agent ... --llm recorded`` end to end with the example agent on the
OpenAI Python client: recorded against the scripted model on loopback, then replayed with the
model stopped, no API key, and a base URL where nothing listens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from offline_store import offline_store, scripted_server
from sql_pipeline import tracereplay_here

from tracereplay.replay.workers.agent_process import usable_cores
from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "weather_agent"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    env["PYTHONPATH"] = str(EXAMPLE)
    env.update(extra)
    return env


def cli(db: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(EXAMPLE),
        env=_env(**env),
    )


OFFLINE = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # no API key; nothing listens there


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the example agent's three runs (recorded against the scripted model) in
    suite ``weather-offline`` (a copy of the session's: ``offline_store``)."""
    return offline_store(tmp_path_factory)


def eval_json(db: Path, tmp: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / f"eval-{len(list(tmp.glob('eval-*.json')))}.json"
    result = cli(db, "eval", "weather-offline", *args, "--json", str(out), **OFFLINE)
    assert out.exists(), result.stdout + result.stderr
    return result.returncode, json.loads(out.read_text()), result.stdout + result.stderr


def test_offline_replay_passes_with_no_network_and_no_api_key(
    recorded: Path, tmp_path: Path
) -> None:
    code, doc, output = eval_json(
        recorded, tmp_path, "--agent", "openai_agent:answer", "--llm", "recorded"
    )
    assert code == 0, output
    assert doc["eval_run"]["options"]["llm"] == "recorded"
    # nothing to wait on: one case per core at once (evaluate.settings.default_concurrency)
    assert doc["eval_run"]["options"]["concurrency"] == usable_cores()
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == []
        assert llm["answered"] == llm["recorded"] >= 2
    assert "prompt drift" not in output


def test_a_new_model_is_prompt_drift_stored_per_case(recorded: Path, tmp_path: Path) -> None:
    code, doc, output = eval_json(
        recorded, tmp_path, "--agent", "openai_agent:answer_v2", "--llm", "recorded"
    )
    assert code == 0, output  # answered in order anyway: the cases pass
    flat = " ".join(output.split())
    assert (
        "prompt drift: LLM call 1: model: recorded scripted-weather-1, replay scripted-weather-2"
        in flat
    )
    # one summary line per case (every call drifted), the strict hint once, no diffs
    assert flat.count("prompt drift: LLM call") == 3, output
    assert "(and 1 more: LLM call 2)" in flat or "(and 2 more: LLM call 2, 3)" in flat, output
    assert flat.count("--llm-match strict makes such a case an ERROR") == 1, output
    assert "--- recorded" not in output
    eval_run_id = doc["eval_run"]["eval_run_id"]
    with open_store(recorded) as store:
        rows = store.query_dicts(
            "SELECT json_extract_string(drift, '$.llm.drift[0].fields[0]') AS field,"
            " json_extract(drift, '$.llm.answered')::INT AS answered"
            " FROM case_results WHERE eval_run_id = ?",
            [eval_run_id],
        )
    assert len(rows) == 3 and all(r["field"] == "model" and r["answered"] >= 2 for r in rows)


def test_strict_matching_makes_the_drifting_cases_errors(recorded: Path, tmp_path: Path) -> None:
    code, doc, output = eval_json(
        recorded,
        tmp_path,
        "--agent",
        "openai_agent:answer_v2",
        "--llm",
        "recorded",
        "--llm-match",
        "strict",
    )
    assert code == 1, output
    for case in doc["cases"]:
        assert case["status"] == "ERROR"
        assert case["reason"].startswith(
            "LLM call 1: prompt drift from the recorded round 1 (model:"
        )


def test_llm_options_need_a_replay(recorded: Path) -> None:
    result = tracereplay_here(recorded, "eval", "weather-offline", "--llm", "recorded", check=False)
    assert result.returncode == 2 and "--llm and --llm-match apply to replay" in result.stderr
    result = tracereplay_here(
        recorded,
        "eval",
        "weather-offline",
        "--agent",
        "openai_agent:answer",
        "--llm-match",
        "strict",
        check=False,
    )
    assert result.returncode == 2 and "--llm-match applies to --llm recorded" in result.stderr


@pytest.fixture
def model_url() -> Any:
    """The scripted model serving again: the live part of a fork goes there."""
    server, url = scripted_server().start()
    yield url
    server.shutdown()


def test_a_fork_answers_n_calls_from_the_recording_and_sends_the_rest_live(
    recorded: Path, tmp_path: Path, model_url: str
) -> None:
    out = tmp_path / "fork.json"
    result = cli(
        recorded,
        "eval",
        "weather-offline",
        "--agent",
        "openai_agent:answer_v2",
        "--llm",
        "recorded",
        "--llm-until",
        "1",
        "--json",
        str(out),
        OPENAI_BASE_URL=model_url,
    )
    output = " ".join((result.stdout + result.stderr).split())
    assert out.exists(), output
    doc = json.loads(out.read_text())
    assert doc["eval_run"]["options"]["llm_until"] == 1
    assert doc["eval_run"]["options"]["concurrency"] == 4  # the live calls wait
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [], output
        assert llm["fork_round"] == 1 and llm["answered"] == 1
        assert llm["live"] and llm["live"][0] == 2 and llm["unused"] == []
        recorded_part = [d for d in llm["drift"] if not d["live"]]
        live_part = [d for d in llm["drift"] if d["live"]]
        assert [d["round"] for d in recorded_part] == [1]  # the new model, answered anyway
        assert live_part and all(not d["answered"] and d["round"] >= 2 for d in live_part)
        assert "model" in live_part[0]["fields"]
    assert "fork at LLM call 1: call 1 answered from the recording, 1 live from call 2" in output
    assert "prompt drift: LLM call 2 (live): model: recorded scripted-weather-1" in output
    run_id = doc["cases"][0]["repetitions"][0]["run_id"]
    shown = tracereplay_here(recorded, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "fork at LLM call 1: the recording answered the calls above" in text
    assert text.index("fork at LLM call 1") < text.index("live")


def test_the_live_part_of_a_fork_really_calls_the_model(recorded: Path, tmp_path: Path) -> None:
    # nothing listens at the agent's base URL: call 1 is answered, call 2 cannot be sent
    code, doc, output = eval_json(
        recorded,
        tmp_path,
        "--agent",
        "openai_agent:answer",
        "--llm",
        "recorded",
        "--llm-until",
        "1",
    )
    assert code == 1, output
    for case in doc["cases"]:
        assert case["status"] == "ERROR"
        assert case["repetitions"][0]["replay"]["llm"]["live"] == [2]


def test_llm_until_needs_recorded_llm(recorded: Path) -> None:
    result = tracereplay_here(
        recorded,
        "eval",
        "weather-offline",
        "--agent",
        "openai_agent:answer",
        "--llm-until",
        "1",
        check=False,
    )
    assert result.returncode == 2 and "--llm-until applies to --llm recorded" in result.stderr


def test_replay_one_run_without_promoting_it(recorded: Path, tmp_path: Path) -> None:
    with open_store(recorded) as store:
        run_id = store.query_dicts(
            "SELECT run_id FROM runs WHERE agent_name = 'weather_openai' AND kind = 'live' "
            "ORDER BY started_at LIMIT 1"
        )[0]["run_id"]
    out = tmp_path / "replay.json"
    args = ("replay", run_id[:10], "--agent", "openai_agent:answer_v2", "--llm", "recorded")
    result = cli(recorded, *args, "--json", str(out), **OFFLINE)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0, output
    assert "prompt drift: LLM call 1: model: recorded scripted-weather-1" in output
    assert "suite replay:weather_openai" in output
    doc = json.loads(out.read_text())
    assert [c["repetitions"][0]["source_run_id"] for c in doc["cases"]] == [run_id]
    again = cli(recorded, *args, **OFFLINE)  # the same run again: the same case, a new eval run
    assert again.returncode == 0, again.stdout + again.stderr
    with open_store(recorded) as store:
        counts = store.query_dicts(
            "SELECT count(DISTINCT c.case_id) AS cases, count(*) AS results"
            " FROM case_results c JOIN eval_suites s USING (suite_id)"
            " WHERE s.name = 'replay:weather_openai'"
        )[0]
    assert counts == {"cases": 1, "results": 2}
    replay_run = doc["cases"][0]["repetitions"][0]["run_id"]
    assert tracereplay_here(recorded, "show", replay_run).returncode == 0


def test_replay_bad_input_is_one_line(recorded: Path) -> None:
    result = tracereplay_here(
        recorded, "replay", "nosuchrun", "--agent", "openai_agent:answer", check=False
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    result = tracereplay_here(
        recorded, "replay", "x", "--agent", "openai_agent:answer", "--llm-until", "1", check=False
    )
    assert result.returncode == 2 and "--llm-until applies to --llm recorded" in result.stderr


AGENTS = Path(__file__).parent / "agents"
WITH_AGENTS = {**OFFLINE, "PYTHONPATH": f"{EXAMPLE}{os.pathsep}{AGENTS}"}


def test_tools_run_live_against_recorded_decisions_show_tool_result_drift(
    recorded: Path, tmp_path: Path
) -> None:
    """--llm recorded --live-tools: every tool runs for real; a changed data source is
    tool-result drift per call, and the next decision the recording cannot answer is named."""
    checks = tmp_path / "checks.yaml"
    checks.write_text("- kind: toolResultsMatch\n  mode: json\n")
    assert (
        cli(recorded, "suite", "create", "weather-tools", "--checks", str(checks)).returncode == 0
    )
    with open_store(recorded) as store:
        run_ids = [
            r["run_id"]
            for r in store.query_dicts(
                "SELECT run_id FROM runs WHERE agent_name = 'weather_openai' AND kind = 'live'"
            )
        ]
    for run_id in run_ids:
        assert cli(recorded, "promote", run_id, "--suite", "weather-tools").returncode == 0
    out = tmp_path / "tools.json"
    args = ("eval", "weather-tools", "--agent", "changed_data:answer", "--llm", "recorded")
    result = cli(recorded, *args, "--live-tools", "--json", str(out), **WITH_AGENTS)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1, output  # toolResultsMatch fails on the drift
    doc = json.loads(out.read_text())
    drifted = 0
    for case in doc["cases"]:
        replay = case["repetitions"][0]["replay"]
        assert replay["tools_live"] == replay["tool_results_compared"] >= 1
        for d in replay["tool_result_drift"]:
            drifted += 1
            assert d["recorded_result"] != d["live_result"] and "-" in d["diff"]
            assert '"temperature_c"' in d["diff"]
        if replay["tool_result_drift"]:
            assert case["status"] == "FAILED"
            [check] = [c for c in case["checks"] if c["check"] == "toolResultsMatch"]
            assert (
                check["status"] == "FAILED"
                and "differ from the recording (json)" in (check["explanation"])
            )
            assert replay["diverged_at"] == 2  # the request after the changed result drifted
    assert drifted >= 1
    assert "tool-result drift: get_weather (round 1):" in output
    assert "LLM call 2: the recording no longer answers this decision" in output
    replay_run = doc["cases"][0]["repetitions"][0]["run_id"]
    shown = tracereplay_here(recorded, "show", replay_run)
    assert "tool-result drift" in " ".join(shown.stdout.split()), shown.stdout


def test_a_changed_tool_result_fails_the_case_without_a_result_check(
    recorded: Path, tmp_path: Path
) -> None:
    """--llm recorded --live-tools with the suite's own checks (no toolResultsMatch): a tool
    that now answers otherwise makes its case FAILED by the replay verdict, the change its
    reason; the run is not a PASS from the point it stops being comparable."""
    args = ("--agent", "changed_data:answer", "--llm", "recorded", "--live-tools")
    out = tmp_path / "changed.json"
    result = cli(recorded, "eval", "weather-offline", *args, "--json", str(out), **WITH_AGENTS)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1, output
    doc = json.loads(out.read_text())
    drifted = [c for c in doc["cases"] if c["repetitions"][0]["replay"]["tool_result_drift"]]
    assert drifted, output
    for case in drifted:
        assert case["status"] == "FAILED", case["reason"]
        [replay] = [c for c in case["checks"] if c["check"] == "replay"]
        assert replay["explanation"].startswith("tool result changed: get_weather("), replay
        assert "temperature_c" in replay["explanation"]
        assert replay["details"]["tool_result_drift"][0]["live_result"]
    assert "tool result changed: get_weather(" in output


def test_the_same_tools_live_match_the_recording(recorded: Path, tmp_path: Path) -> None:
    code, doc, output = eval_json(
        recorded, tmp_path, "--agent", "openai_agent:answer", "--llm", "recorded", "--live-tools"
    )
    assert code == 0, output
    for case in doc["cases"]:
        replay = case["repetitions"][0]["replay"]
        assert replay["tools_live"] >= 1 and replay["tool_result_drift"] == []
        assert replay["diverged_at"] is None
    assert "result(s) as recorded, 0 differ" in output


def test_no_tool_runs_live_before_the_fork(recorded: Path, tmp_path: Path, model_url: str) -> None:
    """--llm-until 1 --live-tools: the tool calls of round 1 are answered from the recording
    (the changed data source is not asked), the ones after the fork run for real."""
    out = tmp_path / "fork-tools.json"
    args = ("eval", "weather-offline", "--agent", "changed_data:answer", "--llm", "recorded")
    env = {**WITH_AGENTS, "OPENAI_BASE_URL": model_url}
    result = cli(recorded, *args, "--llm-until", "1", "--live-tools", "--json", str(out), **env)
    assert out.exists(), result.stdout + result.stderr
    doc = json.loads(out.read_text())
    seen = {"first": 0, "later": 0}
    for case in doc["cases"]:
        rep = case["repetitions"][0]
        first_round = [t for t in rep["tool_calls"] if t["round"] == 1]
        later = [t for t in rep["tool_calls"] if t["round"] > 1]
        assert rep["replay"]["tools_live"] == len(later)
        # only the calls that ran are compared with the recording (not those it answered)
        assert rep["replay"]["tool_results_compared"] == len(later)
        assert all(d["round"] > 1 for d in rep["replay"]["tool_result_drift"])
        seen["first"] += len(first_round)
        seen["later"] += len(later)
        for call in first_round:  # the recorded answer, not the changed data's
            assert '"temperature_c":14' not in call["result"].replace(" ", "")
        assert rep["replay"]["llm"]["fork_round"] == 1
    assert seen["first"] >= 2 and seen["later"] >= 1


def test_the_fork_note_reads_for_every_n() -> None:
    from tracereplay.evaluate.formats.notes import fork_note
    from tracereplay.scoring.outcomes import LlmReport

    assert fork_note(LlmReport(fork_round=0, live=[1, 2])) == (
        "fork at LLM call 0: no call answered from the recording, 2 live from call 1"
    )
    assert fork_note(LlmReport(fork_round=3, live=[4])).startswith(
        "fork at LLM call 3: calls 1-3 answered from the recording, 1 live from call 4"
    )
    assert "made no LLM call past it" in fork_note(LlmReport(fork_round=2))
