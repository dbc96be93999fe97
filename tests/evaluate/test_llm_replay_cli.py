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

from tracereplay.ingest import open_store

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
    suite ``weather-offline``."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import scripted_server
    finally:
        sys.path.remove(str(EXAMPLE))
    db = tmp_path_factory.mktemp("offline") / "store.duckdb"
    server, url = scripted_server.start()
    try:
        made = subprocess.run(
            [sys.executable, str(EXAMPLE / "openai_agent.py"), "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=300,
            env=_env(OPENAI_BASE_URL=url, OPENAI_API_KEY="demo"),
        )
        assert made.returncode == 0, made.stdout + made.stderr
    finally:
        server.shutdown()
    promoted = cli(
        db, "promote", "--where", "agent_name = 'weather_openai'", "--suite", "weather-offline"
    )
    assert promoted.returncode == 0, promoted.stdout + promoted.stderr
    return db


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
    assert (
        "prompt drift: LLM call 1: model: recorded scripted-weather-1, replay scripted-weather-2"
        in " ".join(output.split())
    )
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
    result = cli(recorded, "eval", "weather-offline", "--llm", "recorded")
    assert result.returncode == 2 and "--llm and --llm-match apply to replay" in result.stderr
    result = cli(
        recorded,
        "eval",
        "weather-offline",
        "--agent",
        "openai_agent:answer",
        "--llm-match",
        "strict",
    )
    assert result.returncode == 2 and "--llm-match applies to --llm recorded" in result.stderr


@pytest.fixture
def model_url() -> Any:
    """The scripted model serving again: the live part of a fork goes there."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import scripted_server
    finally:
        sys.path.remove(str(EXAMPLE))
    server, url = scripted_server.start()
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
    assert "fork at LLM call 1: calls 1-1 answered from the recording" in output
    assert "prompt drift: LLM call 2 (live): model: recorded scripted-weather-1" in output
    run_id = doc["cases"][0]["repetitions"][0]["run_id"]
    shown = cli(recorded, "show", run_id)
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
    result = cli(
        recorded, "eval", "weather-offline", "--agent", "openai_agent:answer", "--llm-until", "1"
    )
    assert result.returncode == 2 and "--llm-until applies to --llm recorded" in result.stderr
