"""Every replay run keeps each LLM call its agent made, whatever answered it (issue 50): an
OpenAI-client loop with no LLM instrumentation at all (``agents/bare_openai_loop.py``, tools
``@tracereplay.tool``) replayed with the recording answering, past a fork, and live. Its replay
runs have an ``llm_calls`` row per call with its messages and ``source``, and their tool calls
in the rounds of the calls that asked them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from offline_store import offline_store, scripted_server

from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).resolve().parent / "agents"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_store(tmp_path_factory)


@pytest.fixture(scope="module")
def model_url() -> Any:
    server, url = scripted_server().start()
    yield url
    server.shutdown()


def replay(
    db: Path, tmp: Path, *args: str, base_url: str, agent: str = "answer"
) -> tuple[dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    env.update(PYTHONPATH=str(AGENTS), OPENAI_BASE_URL=base_url)
    out = tmp / "eval.json"
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather-offline",
         "--agent", f"bare_openai_loop:{agent}", *args, "--json", str(out)],
        capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp),
    )  # fmt: skip
    assert out.exists(), done.stdout + done.stderr
    return json.loads(out.read_text()), done.stdout + done.stderr


def stored(db: Path, run_id: str) -> tuple[dict[str, Any], list[dict], list[dict]]:
    with open_store(db) as store:
        (run,) = store.query_dicts(
            "SELECT total_llm_calls, total_rounds FROM runs WHERE run_id = ?", [run_id]
        )
        llm = store.query_dicts(
            "SELECT round, source, model, input_messages, output_messages FROM llm_calls "
            "WHERE run_id = ? ORDER BY round",
            [run_id],
        )
        tools = store.query_dicts(
            "SELECT round, tool_name FROM tool_calls WHERE run_id = ? ORDER BY position", [run_id]
        )
    for row in llm:
        row["input_messages"] = json.loads(row["input_messages"])
        row["output_messages"] = json.loads(row["output_messages"])
    return run, llm, tools


def asked(call: dict[str, Any]) -> list[str]:
    """The tools the call's answer asked for."""
    return [
        p["name"] for m in call["output_messages"] for p in m["parts"] if p["type"] == "tool_call"
    ]


def assert_every_call_kept(db: Path, doc: dict[str, Any], sources: list[str] | None) -> None:
    for case in doc["cases"]:
        rep = case["repetitions"][0]
        run, llm, tools = stored(db, rep["run_id"])
        assert len(llm) >= 2, (case["query"], llm)
        assert run["total_llm_calls"] == len(llm) == run["total_rounds"]
        assert [c["round"] for c in llm] == list(range(1, len(llm) + 1))
        if sources is not None:
            expected = sources + [sources[-1]] * (len(llm) - len(sources))
            assert [c["source"] for c in llm] == expected, case["query"]
        first = llm[0]["input_messages"]
        assert [m["role"] for m in first] == ["system", "user"]
        assert first[1]["parts"][0]["content"] == case["query"]
        # the later requests carry the tool results the earlier answers asked for
        assert any(m["role"] == "tool" for m in llm[-1]["input_messages"])
        # every tool call sits in the round of the LLM call that asked for it
        assert tools and all(t["round"] >= 1 for t in tools), tools
        for t in tools:
            assert t["tool_name"] in asked(llm[t["round"] - 1]), (t, llm[t["round"] - 1])


def test_offline_replay_keeps_each_answered_call(recorded: Path, tmp_path: Path) -> None:
    doc, output = replay(recorded, tmp_path, "--llm", "recorded", base_url="http://127.0.0.1:9/v1")
    assert {c["status"] for c in doc["cases"]} == {"PASSED"}, output
    assert_every_call_kept(recorded, doc, ["recording"])


def test_a_fork_keeps_the_answered_and_the_live_calls(
    recorded: Path, tmp_path: Path, model_url: str
) -> None:
    """The issue's case: the first call from the recording, the rest from a live model."""
    doc, output = replay(
        recorded, tmp_path, "--llm", "recorded", "--llm-until", "1", base_url=model_url
    )
    assert all(c["status"] != "ERROR" for c in doc["cases"]), output
    assert_every_call_kept(recorded, doc, ["recording", "live"])
    shown = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(recorded), "show",
         doc["cases"][0]["repetitions"][0]["run_id"]],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip
    text = " ".join(shown.stdout.split())
    assert "round 1 llm" in text and "answered by: recording" in text, shown.stdout
    assert "round 2 llm" in text and "answered by: live" in text, shown.stdout


def test_a_live_replay_keeps_each_call(recorded: Path, tmp_path: Path, model_url: str) -> None:
    doc, output = replay(recorded, tmp_path, base_url=model_url)
    assert all(c["status"] != "ERROR" for c in doc["cases"]), output
    assert_every_call_kept(recorded, doc, ["live"])


def test_a_refused_call_is_kept_with_its_error(recorded: Path, tmp_path: Path) -> None:
    """Strict matching refuses a call whose request drifted (a new model): the ERROR case keeps
    its replay run, linked from its result, with the refused call in it."""
    doc, output = replay(
        recorded, tmp_path, "--llm", "recorded", "--llm-match", "strict",
        base_url="http://127.0.0.1:9/v1", agent="answer_v2",
    )  # fmt: skip
    for case in doc["cases"]:
        assert case["status"] == "ERROR", output
        rep = case["repetitions"][0]
        assert rep["run_id"], case
        _, llm, tools = stored(recorded, rep["run_id"])
        assert [(c["round"], c["source"], c["output_messages"]) for c in llm] == [
            (1, "refused", [])
        ]
        assert llm[0]["input_messages"][1]["parts"][0]["content"] == case["query"]
        assert tools == []
