"""Multi-turn cases (issue 54): a conversation promoted with ``promote --session`` is one case
whose turns are replayed in order on one conversation, each answered from its own recorded
run, judged per turn (a ``case_results`` row each, with its turn number) and as a whole.
``--history recorded`` gives the later turns the recorded answers; ``--history replayed`` the
agent's own, so a regression in turn 1 shows in the turns after it. Driven through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conversation import SESSION, TURNS, turn_run_ids, write_conversation
from postgres_server import pg_server, pg_url, store_target  # noqa: F401

from tracereplay.store import Store

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).parent / "agents"


def _cli(db: Path | str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    if os.environ.get("TRACEREPLAY_LOCAL_DIR"):  # a PostgreSQL store's local files (pg_url)
        env["TRACEREPLAY_LOCAL_DIR"] = os.environ["TRACEREPLAY_LOCAL_DIR"]
    env.update(PYTHONPATH=str(AGENTS), COLUMNS="160")
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True, text=True, timeout=180, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-turn Paris conversation promoted as one case of suite ``chat``."""
    tmp = tmp_path_factory.mktemp("multi_turn")
    db = tmp / "store.duckdb"
    assert _cli(db, "ingest", str(write_conversation(tmp / "conversation.json"))).returncode == 0
    promoted = _cli(db, "promote", "--session", SESSION, "--suite", "chat")
    assert promoted.returncode == 0, promoted.stderr
    assert "as case #0: 3 turns (reference_run)" in promoted.stderr
    return db


def _eval(db: Path, tmp: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / "eval.json"
    done = _cli(db, "eval", "chat", *args, "--json", str(out))
    return (
        done.returncode,
        json.loads(out.read_text()),
        " ".join((done.stdout + done.stderr).split()),
    )


def _rows(db: Path, eval_run_id: str) -> list[tuple[Any, ...]]:
    with Store.open(db) as store:
        return store.con.execute(
            "SELECT turn, status, response, source_run_id FROM case_results"
            " WHERE eval_run_id = ? ORDER BY turn NULLS FIRST",
            [eval_run_id],
        ).fetchall()


def test_a_session_is_promoted_as_one_case_of_its_turns(db: Path, tmp_path: Path) -> None:
    exported = _cli(db, "suite", "export", "chat")
    assert exported.returncode == 0, exported.stderr
    [case] = yaml.safe_load(exported.stdout)["cases"]
    assert case["query"] == TURNS[0][0]
    assert [t["query"] for t in case["turns"]] == [q for q, _ in TURNS]
    assert [t["response"] for t in case["turns"]] == [a for _, a in TURNS]
    assert [t["source_run_id"] for t in case["turns"]] == turn_run_ids()
    assert all(t["expected_tool_calls"] == [{"name": "get_weather", "arguments": {}}]
               for t in case["turns"])  # fmt: skip
    assert case["metadata"]["session_id"] == SESSION
    again = _cli(db, "promote", "--session", SESSION, "--suite", "chat")
    assert again.returncode == 0 and "already case #0" in again.stderr


def test_recorded_mode_judges_each_turn_against_its_run(db: Path, tmp_path: Path) -> None:
    code, doc, output = _eval(db, tmp_path)
    assert code == 0, output
    [case] = doc["cases"]
    assert case["status"] == "PASSED" and case["reason"] == "all 3 turns passed"
    rows = _rows(db, doc["eval_run"]["eval_run_id"])
    assert [(r[0], r[1]) for r in rows] == [(None, "PASSED"), (1, "PASSED"), (2, "PASSED"),
                                            (3, "PASSED")]  # fmt: skip
    assert [r[3] for r in rows[1:]] == turn_run_ids()


def test_each_turn_is_replayed_on_the_conversation_so_far(db: Path, tmp_path: Path) -> None:
    code, doc, output = _eval(db, tmp_path, "--agent", "chat_agents:conversant")
    assert code == 0, output
    rows = _rows(db, doc["eval_run"]["eval_run_id"])
    assert [r[2] for r in rows[1:]] == [a for _, a in TURNS]
    assert all(r[1] == "PASSED" for r in rows)
    [rep] = doc["cases"][0]["repetitions"]
    assert [(t["turn"], t["status"], t["response"]) for t in rep["turns"]] == [
        (n, "PASSED", answer) for n, (_, answer) in enumerate(TURNS, 1)
    ]
    # every turn made its replay run (drained from the spool by the next command)
    runs = _cli(
        db,
        "sql",
        "SELECT r.query, r.response FROM runs r JOIN case_results c"
        " ON c.run_id = r.run_id WHERE c.turn IS NOT NULL AND c.eval_run_id ="
        f" '{doc['eval_run']['eval_run_id']}' ORDER BY c.turn",
        "--format",
        "json",
    )
    assert [(r["query"], r["response"]) for r in json.loads(runs.stdout)] == TURNS
    with Store.open(db) as store:  # the views count the conversation once
        [(cases, passed)] = store.con.execute(
            "SELECT cases, passed FROM suite_trend WHERE eval_run_id = ?",
            [doc["eval_run"]["eval_run_id"]],
        ).fetchall()
    assert (cases, passed) == (1, 1)


def test_an_agent_object_of_no_known_framework_gets_the_conversation(
    db: Path, tmp_path: Path
) -> None:
    code, doc, output = _eval(db, tmp_path, "--agent", "chat_agents:bot")
    assert code == 0, output
    [rep] = doc["cases"][0]["repetitions"]
    assert [t["response"] for t in rep["turns"]] == [a for _, a in TURNS]
    assert [t["replay"]["history"] for t in rep["turns"]] == [None, "given", "given"]


def test_a_regression_in_turn_one_carries_on_only_with_replayed_history(
    db: Path, tmp_path: Path
) -> None:
    code, doc, output = _eval(db, tmp_path, "--agent", "chat_agents:forgets_paris")
    assert code == 1
    [case] = doc["cases"]
    assert case["status"] == "FAILED"
    statuses = [r[1] for r in _rows(db, doc["eval_run"]["eval_run_id"])]
    assert statuses == ["FAILED", "FAILED", "PASSED", "PASSED"]  # the recorded answers go on
    assert "containsExpected: turn 1: response does not contain the expected text" in output

    code, doc, output = _eval(
        db, tmp_path, "--agent", "chat_agents:forgets_paris", "--history", "replayed"
    )
    assert code == 1
    rows = _rows(db, doc["eval_run"]["eval_run_id"])
    assert [r[1] for r in rows] == ["FAILED", "FAILED", "FAILED", "FAILED"]
    assert [r[2] for r in rows[1:]] == ["I don't know.", "Where?", "Which city do you mean?"]
    assert "turn 2: response does not contain" in output and "turn 3:" in output
    assert doc["eval_run"]["options"]["history"] == "replayed"


def test_the_suite_file_round_trips_and_a_bad_turn_is_one_line(db: Path, tmp_path: Path) -> None:
    exported = _cli(db, "suite", "export", "chat")
    suite = yaml.safe_load(exported.stdout)
    suite["name"] = "chat-copy"
    suite.pop("id")
    for case in suite["cases"]:
        case.pop("id")
    suite["cases"][0]["turns"][2]["query"] = "And the day after?"
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(suite, allow_unicode=True))
    imported = _cli(db, "suite", "import", str(good))
    assert imported.returncode == 0, imported.stderr
    back = yaml.safe_load(_cli(db, "suite", "export", "chat-copy").stdout)
    assert back["cases"][0]["turns"][2]["query"] == "And the day after?"

    suite["name"] = "chat-bad"
    suite["cases"][0]["turns"][1]["query"] = "  "
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(suite, allow_unicode=True))
    refused = _cli(db, "suite", "import", str(bad))
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert "turn's query must not be empty" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_promote_session_refuses_clearly(db: Path) -> None:
    missing = _cli(db, "promote", "--session", "no-such-session", "--suite", "chat")
    assert missing.returncode != 0
    assert "no session 'no-such-session'" in missing.stderr and "Traceback" not in missing.stderr
    both = _cli(db, "promote", turn_run_ids()[0], "--session", SESSION)
    assert both.returncode == 2 and "one of them" in both.stderr
    # turn 1 promoted alone first: the conversation cannot be a second case of that run
    alone = _cli(db, "promote", turn_run_ids()[0], "--suite", "turn-one")
    assert alone.returncode == 0, alone.stderr
    taken = _cli(db, "promote", "--session", SESSION, "--suite", "turn-one")
    assert taken.returncode == 2 and "Traceback" not in taken.stderr
    assert "is already case #0 of suite 'turn-one', a one-question case" in taken.stderr


def test_conversation_checks_judge_the_whole_once(db: Path, tmp_path: Path) -> None:
    suite = yaml.safe_load(_cli(db, "suite", "export", "chat").stdout)
    suite.update(name="chat-whole")
    suite.pop("id")
    suite["cases"][0].pop("id")
    suite["checks"] = [
        {"kind": "status"},
        {"kind": "turnCount", "min": 3},
        {"kind": "toolCalledInSession", "tool": "get_weather", "times": 3},
    ]
    path = tmp_path / "whole.yaml"
    path.write_text(yaml.safe_dump(suite, allow_unicode=True))
    assert _cli(db, "suite", "import", str(path)).returncode == 0

    out = tmp_path / "whole.json"
    done = _cli(db, "eval", "chat-whole", "--agent", "chat_agents:conversant", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    eval_run_id = json.loads(out.read_text())["eval_run"]["eval_run_id"]
    with Store.open(db) as store:
        checks = store.con.execute(
            "SELECT turn, check_name, status FROM check_results WHERE eval_run_id = ?"
            " ORDER BY turn NULLS FIRST, position",
            [eval_run_id],
        ).fetchall()
    whole = [(c[1], c[2]) for c in checks if c[0] is None]
    assert whole == [("status", "PASSED"), ("turnCount", "PASSED"),
                     ("toolCalledInSession", "PASSED")]  # fmt: skip
    assert {c[1] for c in checks if c[0] is not None} == {"status"}  # per turn: no whole checks

    done = _cli(db, "eval", "chat-whole", "--agent", "chat_agents:gives_up", "--json", str(out))
    assert done.returncode == 1
    [case] = json.loads(out.read_text())["cases"]
    assert case["status"] == "FAILED"
    said = " ".join((done.stdout + done.stderr).split())
    assert "turnCount: 2 of 3 turns answered" in said
    assert "get_weather called 2 times (in turns 1, 2)" in said
    assert "turn 3: the agent raised RuntimeError" in said


def test_the_plugin_diff_and_report_read_the_conversation(db: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    env.update(PYTHONPATH=str(AGENTS), TRACEREPLAY_DB=str(db), COLUMNS="160")
    (tmp_path / "test_nothing.py").write_text("")
    args = ["--tracereplay", "chat", "--tracereplay-agent", "chat_agents:forgets_paris"]
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args,
         "--tracereplay-history", "replayed"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert plugin.returncode == 1, plugin.stdout + plugin.stderr
    assert "turn 2 FAILED: And tomorrow?" in plugin.stdout
    assert "  response: Where?" in plugin.stdout

    good = _eval(db, tmp_path, "--agent", "chat_agents:conversant", "--label", "good")[1]
    bad = _eval(db, tmp_path, "--agent", "chat_agents:forgets_paris", "--label", "bad")[1]
    diff = _cli(db, "diff", good["eval_run"]["eval_run_id"], bad["eval_run"]["eval_run_id"])
    said = " ".join(diff.stdout.split())
    assert "regressed" in said.lower() and "turn 1:" in said, said

    html = tmp_path / "report.html"
    report = _cli(db, "report", bad["eval_run"]["eval_run_id"], "--output", str(html))
    assert report.returncode == 0, report.stderr
    assert "turn 1: containsExpected" in html.read_text()


def test_both_engines_store_and_read_the_turns(
    store_target: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    conversation = write_conversation(tmp_path / "conversation.json")
    assert _cli(store_target, "ingest", str(conversation)).returncode == 0
    assert _cli(store_target, "promote", "--session", SESSION, "--suite", "chat").returncode == 0
    out = tmp_path / "eval.json"
    done = _cli(store_target, "eval", "chat", "--agent", "chat_agents:forgets_paris",
                "--history", "replayed", "--json", str(out))  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    eval_run_id = json.loads(out.read_text())["eval_run"]["eval_run_id"]
    with Store.open(store_target) as store:
        rows = store.query_dicts(
            "SELECT turn, status, response FROM case_results WHERE eval_run_id = ?"
            " ORDER BY turn NULLS FIRST",
            [eval_run_id],
        )
        trend = store.query_dicts(
            "SELECT cases, failed FROM suite_trend WHERE eval_run_id = ?", [eval_run_id]
        )
        [case] = store.query_dicts("SELECT turns FROM eval_cases")
    assert [(r["turn"], r["status"]) for r in rows] == [
        (None, "FAILED"), (1, "FAILED"), (2, "FAILED"), (3, "FAILED")
    ]  # fmt: skip
    assert [r["response"] for r in rows[1:]] == [
        "I don't know.",
        "Where?",
        "Which city do you mean?",
    ]
    assert [(t["cases"], t["failed"]) for t in trend] == [(1, 1)]
    turns = case["turns"] if isinstance(case["turns"], list) else json.loads(case["turns"])
    assert [t["query"] for t in turns] == [q for q, _ in TURNS]
    html = tmp_path / "report.html"
    assert _cli(store_target, "report", eval_run_id, "--output", str(html)).returncode == 0
    assert html.read_text().count('class="turn"') == 3
