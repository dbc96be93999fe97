"""Editing from the pages: promote one run (with the form's edits), bulk promote, edit and
remove cases. The results are read back from the store and compared with what
``tracereplay promote`` makes."""

from __future__ import annotations

import re
from pathlib import Path

from sql_pipeline import tracereplay
from ui_helpers import client_for

from tracereplay.store import Store
from tracereplay.store import suites as suite_store


def _run(db: Path, where: str) -> str:
    with Store.open(db) as store:
        return store.con.execute(
            f"SELECT run_id FROM runs WHERE {where} ORDER BY started_at, run_id LIMIT 1"
        ).fetchall()[0][0]


def _cases(db: Path, suite: str):
    with Store.open(db) as store:
        found = suite_store.find_suite(store, suite)
        return [] if found is None else suite_store.list_cases(store, found.id)


def test_promote_form_defaults_are_what_promote_makes(fresh_db: Path, tmp_path: Path) -> None:
    run_id = _run(fresh_db, "status = 'success' AND parent_run_id IS NULL")
    with client_for(fresh_db) as client:
        form = client.get(f"/runs/{run_id}/promote").text
        assert 'name="expected_output"' in form and 'id="expected_tools" checked' in form
        expected = re.search(r'id="expected_output" rows="4">(.*?)</textarea>', form, re.S)
        parameters = re.search(
            r'id="parameters" rows="3" class="mono">(.*?)</textarea>', form, re.S
        )
        context = re.search(r'id="context" rows="5" class="mono">(.*?)</textarea>', form, re.S)
        import html as html_lib

        data = {
            "suite": "", "suite_new": "from-ui", "kind": "",
            "expected_output": html_lib.unescape(expected.group(1)) if expected else "",
            "expected_tools": "on", "checks": "",
            "parameters": html_lib.unescape(parameters.group(1)) if parameters else "",
            "context": html_lib.unescape(context.group(1)) if context else "", "tags": "",
        }  # fmt: skip
        response = client.post(f"/runs/{run_id}/promote", data=data)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/cases/")
    # the same run promoted by the CLI into another suite: the same case but for ids and times
    copy = tmp_path / "cli.duckdb"
    copy.write_bytes(fresh_db.read_bytes())
    tracereplay(copy, "promote", run_id, "--suite", "from-cli")
    [ui_case] = _cases(fresh_db, "from-ui")
    [cli_case] = _cases(copy, "from-cli")
    skip = {"id", "suite_id", "promoted_at"}
    assert ui_case.model_dump(exclude=skip) == cli_case.model_dump(exclude=skip)


def test_promote_with_edits_and_again(fresh_db: Path) -> None:
    run_id = _run(fresh_db, "parent_run_id IS NULL")
    data = {
        "suite_new": "edited", "kind": "negative_score", "expected_output": "sunny",
        "checks": "- kind: status\n- kind: containsExpected\n  name: says-sunny\n",
        "parameters": "city=Paris\nunits=metric", "context": "Be brief.", "tags": "a, b, a",
    }  # fmt: skip
    with client_for(fresh_db) as client:
        response = client.post(f"/runs/{run_id}/promote", data=data)
        assert response.status_code == 303
        page = client.get(response.headers["location"]).text
        assert "promoted into suite" in page and "(new suite, default checks)" in page
        [case] = _cases(fresh_db, "edited")
        assert case.source_run_id == run_id and case.source_kind == "negative_score"
        assert case.expected_output == "sunny" and case.tags == ["a", "b"]
        assert case.parameters == {"city": "Paris", "units": "metric"}
        assert [d.to_dict() for d in case.context] == [{"name": "context", "content": "Be brief."}]
        assert [c.label for c in case.checks or []] == ["status", "says-sunny"]
        assert case.expected_tool_calls == []  # the box was not ticked
        again = client.post(
            f"/runs/{run_id}/promote", data={**data, "suite_new": "", "suite": "edited"}
        )
        note = client.get(again.headers["location"]).text
        assert "already case #0" in note and "nothing changed" in note
        assert len(_cases(fresh_db, "edited")) == 1


def test_bad_form_input_writes_nothing(fresh_db: Path) -> None:
    run_id = _run(fresh_db, "parent_run_id IS NULL")
    with client_for(fresh_db) as client:
        for field, value, message in [
            ("checks", "- kind: noSuchCheck", "noSuchCheck"),
            ("checks", "- [unclosed", "not valid YAML"),
            ("parameters", "just text", "name=value"),
            ("suite_new", "", "choose a suite"),
            ("kind", "nonsense", "unknown kind"),
        ]:
            data = {"suite_new": "bad", field: value}
            response = client.post(f"/runs/{run_id}/promote", data=data)
            assert response.status_code == 400, (field, value)
            assert message in response.text and 'id="form-error"' in response.text
            assert f">{value}</textarea>" in response.text or field not in ("checks", "parameters")
    assert _cases(fresh_db, "bad") == []


def test_case_edit_and_removal(fresh_db: Path) -> None:
    run_id = _run(fresh_db, "parent_run_id IS NULL")
    tracereplay(fresh_db, "promote", run_id, "--suite", "s")
    [case] = _cases(fresh_db, "s")
    with client_for(fresh_db) as client:
        data = {
            "query": "What is the weather in {{city}}?", "expected_output": "",
            "expected_tool_calls": '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
            "checks": "", "parameters": "city=Paris", "context": "", "tags": "edited",
        }  # fmt: skip
        response = client.post(f"/cases/{case.id}", data=data)
        assert response.status_code == 303
        assert "case #0 saved" in client.get(response.headers["location"]).text
        [edited] = _cases(fresh_db, "s")
        assert edited.id == case.id and edited.seq == case.seq
        assert edited.query == "What is the weather in {{city}}?" and edited.expected_output is None
        assert [t.to_dict() for t in edited.expected_tool_calls] == [
            {"name": "get_weather", "arguments": {"city": "Paris"}}
        ]
        assert edited.tags == ["edited"] and edited.source_run_id == run_id
        bad = client.post(f"/cases/{case.id}", data={**data, "expected_tool_calls": "[{"})
        assert bad.status_code == 400 and "not valid JSON" in bad.text
        assert client.post(f"/cases/{case.id}", data={**data, "query": " "}).status_code == 400
        gone = client.post(f"/cases/{case.id}/delete")
        assert gone.status_code == 303 and _cases(fresh_db, "s") == []


def test_bulk_promote_selected_and_filtered(fresh_db: Path) -> None:
    with Store.open(fresh_db) as store:
        ids = [r[0] for r in store.con.execute(
            "SELECT run_id FROM runs WHERE kind = 'live' ORDER BY started_at, run_id"
        ).fetchall()]  # fmt: skip
        service, matching = store.con.execute(
            "SELECT service_name, count(*) FROM runs WHERE kind = 'live' GROUP BY 1"
            " ORDER BY 2 DESC, 1 LIMIT 1"
        ).fetchall()[0]
    with client_for(fresh_db) as client:
        response = client.post(
            "/runs/promote",
            data={"run": ids[:2], "scope": "selected", "suite_new": "picked", "tags": "bulk"},
        )
        assert response.status_code == 303
        note = client.get(response.headers["location"]).text
        assert "2 new cases in suite" in note
        assert {c.source_run_id for c in _cases(fresh_db, "picked")} == set(ids[:2])
        response = client.post(
            "/runs/promote",
            data={"scope": "filtered", "service": service, "status": ["success", "failed"],
                  "suite_new": "by-service", "back": "/runs?status=success"},
        )  # fmt: skip
        assert response.headers["location"].startswith("/runs?status=success&notice=")
        assert len(_cases(fresh_db, "by-service")) == matching
        none = client.post(
            "/runs/promote", data={"scope": "filtered", "status": "failed", "suite_new": "x"}
        )
        assert none.status_code == 400 and "no run to promote" in none.text
        nothing = client.post("/runs/promote", data={"scope": "selected", "suite_new": "x"})
        assert nothing.status_code == 400 and "no run to promote" in nothing.text
