"""Labelling a run from its page: the form stores a label as ``tracereplay label`` does, the page
shows the run's labels (latest first) beside the monitors' results on it, the promote form
starts from the label (its corrected answer, its kind), and the form is refused from another
site or on a read-only server."""

from __future__ import annotations

import html
import re
from pathlib import Path

from sql_pipeline import tracereplay
from ui_helpers import client_for

from tracereplay.store import Store
from tracereplay.store import suites as suite_store

ORIGIN = {"Origin": "http://127.0.0.1:8765"}


def _run(db: Path) -> str:
    with Store.open(db) as store:
        return store.con.execute(
            "SELECT run_id FROM runs WHERE status = 'success' AND query <> ''"
            " ORDER BY started_at, run_id LIMIT 1"
        ).fetchall()[0][0]


def test_label_from_the_run_page_then_promote(fresh_db: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("TRACEREPLAY_USER", "bob")
    run_id = _run(fresh_db)
    with client_for(fresh_db) as client:
        page = client.get(f"/runs/{run_id}").text
        assert 'id="label-form"' in page and "nobody labelled this run yet" in page
        assert 'id="label-author" value="bob"' in page
        assert "no monitor judged this run" in page
        response = client.post(
            f"/runs/{run_id}/label",
            data={"verdict": "good", "note": "", "expected": "", "author": "bob"},
            headers=ORIGIN,
        )
        assert response.status_code == 303
        response = client.post(
            f"/runs/{run_id}/label",
            data={
                "verdict": "bad",
                "note": "said <foggy>",
                "expected": "Sunny,\r\n21 °C",
                "author": "carol",
            },
            headers=ORIGIN,
        )
        assert response.status_code == 303
        assert response.headers["location"].startswith(f"/runs/{run_id}?notice=")
        page = client.get(response.headers["location"]).text
        assert "labelled bad by carol" in page
        rows = re.findall(r'<li class="label-row">(.*?)</li>', page, re.S)
        assert len(rows) == 2
        assert ">bad<" in rows[0] and "<b>latest</b>" in rows[0] and "carol" in rows[0]
        assert "said &lt;foggy&gt;" in rows[0]  # escaped
        assert ">good<" in rows[1] and "bob" in rows[1]
        # the promote form starts from the label: its corrected answer, a thumbs-down's kind
        form = client.get(f"/runs/{run_id}/promote").text
        expected = re.search(r'id="expected_output" rows="4">(.*?)</textarea>', form, re.S)
        assert expected is not None and html.unescape(expected.group(1)) == "Sunny,\n21 °C"
        assert "from the run's label, bad (negative_score)" in form
        assert 'id="expected_tools" checked' not in form
        response = client.post(
            f"/runs/{run_id}/promote",
            data={"suite_new": "labelled", "expected_output": "Sunny,\n21 °C", "context": ""},
            headers=ORIGIN,
        )
        assert response.status_code == 303, response.text[:300]
    with Store.open(fresh_db) as store:
        labels = store.list_labels(run_id)
        assert [(lab.verdict, lab.author, lab.note, lab.expected) for lab in labels] == [
            ("bad", "carol", "said <foggy>", "Sunny,\n21 °C"),
            ("good", "bob", None, None),
        ]
        suite = suite_store.find_suite(store, "labelled")
        assert suite is not None
        [case] = suite_store.list_cases(store, suite.id)
    assert case.expected_output == "Sunny,\n21 °C"
    assert case.metadata["description"] == "said <foggy>"
    assert case.source_kind == "negative_score"


def test_a_bad_form_says_why_and_keeps_what_was_typed(fresh_db: Path) -> None:
    run_id = _run(fresh_db)
    with client_for(fresh_db) as client:
        response = client.post(
            f"/runs/{run_id}/label",
            data={"verdict": "", "note": "kept note", "expected": "", "author": "x"},
            headers=ORIGIN,
        )
        assert response.status_code == 400
        assert 'id="label-error">choose bad or good<' in response.text
        assert ">kept note</textarea>" in response.text
        unknown = client.post("/runs/ffffffff/label", data={"verdict": "bad"}, headers=ORIGIN)
        assert unknown.status_code in (400, 404)
    with Store.open(fresh_db) as store:
        assert store.count("labels") == 0


def test_the_form_is_refused_from_another_site_and_read_only(fresh_db: Path) -> None:
    run_id = _run(fresh_db)
    data = {"verdict": "bad", "note": "", "expected": "", "author": "x"}
    with client_for(fresh_db) as client:
        other = client.post(
            f"/runs/{run_id}/label", data=data, headers={"Origin": "http://evil.example"}
        )
        assert other.status_code == 403
    with client_for(fresh_db, read_only=True) as client:
        page = client.get(f"/runs/{run_id}").text
        assert 'id="label-form"' not in page and 'id="labels"' in page
        refused = client.post(f"/runs/{run_id}/label", data=data, headers=ORIGIN)
        assert refused.status_code >= 400
    with Store.open(fresh_db) as store:
        assert store.count("labels") == 0


def test_monitor_results_are_shown_beside_the_labels(fresh_db: Path, tmp_path: Path) -> None:
    run_id = _run(fresh_db)
    checks = tmp_path / "m.yaml"
    checks.write_text("checks:\n  - kind: regex\n    pattern: sunny\n    name: says-sunny\n")
    for args in (
        ["monitor", "create", "sunny", "--checks", str(checks)],
        ["monitor", "run"],
        ["label", run_id, "--bad", "--note", "not sunny"],
    ):
        done = tracereplay(fresh_db, *args)
        assert done.returncode == 0, done.stderr
    with client_for(fresh_db) as client:
        page = client.get(f"/runs/{run_id}").text
    section = page.split('id="judgements"', 1)[1].split("</section>", 1)[0]
    monitors = section.split('id="monitor-results"', 1)[1]
    assert 'href="/monitors/sunny"' in monitors and "says-sunny" in monitors
    assert 'class="badge FAILED">FAILED<' in monitors
    assert "not sunny" in section.split('id="monitor-results"', 1)[0]


def test_the_runs_page_filters_and_counts_by_label(fresh_db: Path) -> None:
    """The runs page's label facet: each run's latest label (``unlabelled`` for none), counted
    among the runs the other filters keep, and a filter like the others."""
    with Store.open(fresh_db) as store:
        ids = [
            r[0]
            for r in store.con.execute(
                "SELECT run_id FROM runs WHERE kind = 'live' ORDER BY started_at, run_id LIMIT 3"
            ).fetchall()
        ]
        total = store.con.execute("SELECT count(*) FROM runs WHERE kind = 'live'").fetchall()[0][0]
        store.add_label(ids[0], "bad", note="wrong city", author="dana")
        store.add_label(ids[1], "bad", author="dana")
        store.add_label(ids[1], "good", author="eve")  # the latest label counts
        store.add_label(ids[2], "bad", author="eve")
    with client_for(fresh_db) as client:
        page = client.get("/runs").text
        facet = page[page.index('data-facet="label"') :]
        facet = facet[: facet.index("</section>")]
        counts = dict(re.findall(r'data-value="(\w+)".*?class="count">([\d,]+)<', facet, re.S))
        assert counts == {"bad": "2", "good": "1", "unlabelled": str(total - 3)}, facet
        bad = client.get("/runs?label=bad").text
        assert ids[0] in bad and ids[2] in bad and ids[1] not in bad
