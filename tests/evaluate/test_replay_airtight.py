"""Airtight replay and recorded-failure fidelity with the SDK's own agents.

- A tool that escapes interception (a plain OpenTelemetry tool span, no ``@tracereplay.tool``)
  makes the case an ERROR naming it, unless ``--live-tools``.
- A recorded ``KeyError('no order 9999')`` comes back as a ``KeyError`` whose ``str`` is the
  recorded text exactly, and the stored error names ``KeyError``, not a tracereplay class.
- Same code, same verdict: replay gives every case the verdict recorded mode gives, including
  a run that ended in an exception (FAILED on its status in both).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from replay_fixtures import cli, eval_json, rows

order_agents = importlib.import_module("order_agents")  # tests/evaluate/agents, on sys.path
QUERIES = ["Where is order 1001?", "Where is order 9999?"]


def _suite(db: Path, agent: str) -> None:
    order_agents.record(str(db), agent, QUERIES)
    promoted = cli(db, "promote", "--where", "kind = 'live'", "--suite", "orders")
    assert promoted.exit_code == 0, promoted.output


def _verdicts(doc: dict) -> dict[str, str]:
    return {c["query"]: c["status"] for c in doc["cases"]}


def test_a_tool_escaping_interception_makes_the_case_an_error(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    _suite(db, "escaping")
    order_agents.RAN.clear()
    doc = eval_json(db, tmp_path, "orders", "--agent", "order_agents:escaping", exit_code=1)
    assert {c["status"] for c in doc["cases"]} == {"ERROR"}
    for case in doc["cases"]:
        assert case["reason"] == "tool lookup_order ran live during replay (no --live-tools)"
    live = eval_json(db, tmp_path, "orders", "--agent", "order_agents:escaping", "--live-tools")
    assert {c["status"] for c in live["cases"]} == {"PASSED"}


@pytest.mark.parametrize("agent", ["orders", "orders_strict"])
def test_sdk_agents_replay_with_the_recorded_verdicts_and_errors(
    tmp_path: Path, agent: str
) -> None:
    db = tmp_path / "store.duckdb"
    _suite(db, agent)
    recorded = _verdicts(eval_json(db, tmp_path, "orders"))
    order_agents.RAN.clear()
    doc = eval_json(db, tmp_path, "orders", "--agent", f"order_agents:{agent}")
    assert order_agents.RAN == [], "a tool ran for real during replay"
    assert _verdicts(doc) == recorded
    by_query = {c["query"]: c for c in doc["cases"]}
    missing = by_query["Where is order 9999?"]
    if agent == "orders":
        # the agent saw a KeyError whose str() is the recorded text, quotes not doubled
        assert recorded["Where is order 9999?"] == "PASSED"
        assert missing["repetitions"][0]["response"] == "KeyError: 'no order 9999'"
    else:
        assert recorded["Where is order 9999?"] == "FAILED"
        assert "status" in missing["reason"]
    run_id = missing["repetitions"][0]["run_id"]
    (run,) = rows(db, "SELECT kind, error FROM runs WHERE run_id = ?", [run_id])
    assert run["kind"] == "replay"
    spans = rows(
        db,
        "SELECT attributes, status_message FROM spans WHERE name = 'execute_tool lookup_order' "
        "AND trace_id = (SELECT trace_id FROM runs WHERE run_id = ?)",
        [run_id],
    )
    assert len(spans) == 1
    assert '"error.type":"KeyError"' in spans[0]["attributes"]
    assert '"tracereplay.tool.replayed":true' in spans[0]["attributes"]
    assert "tracereplay.evaluate" not in str(spans[0])
    if agent == "orders_strict":
        assert run["error"] and "KeyError" in run["error"] and "tracereplay" not in run["error"]
