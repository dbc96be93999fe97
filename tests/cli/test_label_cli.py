"""``tracereplay label``: a person's verdict on a run, driven as a user would (the real CLI) on
both engines: labels stored and listed, ``runs --label``, ``promote`` taking the corrected
answer and the note, ``promote --where "label = 'bad'"``, and ``monitor status`` saying how
often a monitor agreed with the labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.monitor.embedded import CHILD_ENV
from tracereplay.store import Store
from tracereplay.store import suites as suite_store

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"
FILES = sorted(str(p) for p in FIXTURES.glob("generated-*.pb"))

runner = CliRunner()


@pytest.fixture(autouse=True)
def _user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEREPLAY_USER", "alice")
    monkeypatch.setenv(CHILD_ENV, "1")  # monitors judge in the foreground here


def cli(target: str, *args: str):
    return runner.invoke(app, ["--store", target, *args])


def ok(target: str, *args: str) -> str:
    result = cli(target, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def _runs(target: str) -> dict[str, list[str]]:
    """The ingested runs' ids: ``weather`` (a query, a foggy answer) and ``empty`` (no content)."""
    ok(target, "ingest", *FILES)
    rows = json.loads(ok(target, "runs", "--format", "json"))
    return {
        "weather": sorted(r["run_id"] for r in rows if r["query"]),
        "empty": sorted(r["run_id"] for r in rows if not r["query"]),
    }


def _listed(target: str, *args: str) -> list[str]:
    return sorted(r["run_id"] for r in json.loads(ok(target, "runs", *args, "-f", "json")))


def test_label_list_and_select(store_target: str) -> None:
    runs = _runs(store_target)
    first, second = runs["weather"][:2]
    out = ok(store_target, "label", first[:8], "--good")
    assert f"labelled run {first} good (by alice)" in out
    out = ok(store_target, "label", first[:8], "--bad", "--note", "wrong city", "--expected", "12")
    assert f"labelled run {first} bad (by alice)" in out
    assert f"tracereplay promote {first[:8]} --suite NAME" in out
    ok(store_target, "label", second, "--good")
    # several labels per run, the latest first; it is the run's label
    listed = ok(store_target, "label", first[:8])
    assert listed.index("bad (latest)") < listed.index("good")
    assert "wrong city" in listed and "alice" in listed
    assert _listed(store_target, "--label", "bad") == [first]
    assert _listed(store_target, "--label", "good") == [second]
    assert "no labels" in ok(store_target, "label", runs["weather"][2])
    with Store.open(store_target) as store:
        labels = store.list_labels(first)
        assert [(lab.verdict, lab.note, lab.expected, lab.author) for lab in labels] == [
            ("bad", "wrong city", "12", "alice"),
            ("good", None, None, "alice"),
        ]
        assert labels[0].created_at > labels[1].created_at
        latest = store.latest_labels([first, second, runs["weather"][2]])
        assert {k: v.verdict for k, v in latest.items()} == {first: "bad", second: "good"}
        rows = store.query_dicts("SELECT run_id, verdict FROM latest_labels ORDER BY run_id")
        assert rows == sorted(
            [{"run_id": first, "verdict": "bad"}, {"run_id": second, "verdict": "good"}],
            key=lambda r: r["run_id"],
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bad", "--good"], "give --bad or --good, not both"),
        (["--note", "x"], "--note and --expected go with --bad or --good"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    target = str(tmp_path / "t.duckdb")
    run = _runs(target)["weather"][0]
    result = cli(target, "label", run, *args)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {message}"


def test_an_unknown_run_is_one_line(tmp_path: Path) -> None:
    target = str(tmp_path / "t.duckdb")
    _runs(target)
    result = cli(target, "label", "ffffffff", "--bad")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: no run matches 'ffffffff'")
    assert len(result.stderr.strip().splitlines()) == 1
    with Store.open(target) as store:
        assert store.count("labels") == 0


def _case(target: str, suite: str) -> list:
    with Store.open(target) as store:
        found = suite_store.find_suite(store, suite)
        return [] if found is None else suite_store.list_cases(store, found.id)


def test_promote_takes_the_correction_and_the_note(store_target: str) -> None:
    runs = _runs(store_target)
    bad, good, plain = runs["weather"][:3]
    ok(store_target, "label", bad, "--bad", "--note", "wrong city", "--expected", "Paris: 21 °C")
    ok(store_target, "label", good, "--good")
    ok(store_target, "promote", bad[:8], "--suite", "fixed")
    [case] = _case(store_target, "fixed")
    assert case.expected_output == "Paris: 21 °C"
    assert case.metadata["description"] == "wrong city"
    assert case.metadata["label"]["verdict"] == "bad"
    assert case.metadata["label"]["author"] == "alice"
    assert case.source_kind == "negative_score"  # a successful run a person said was bad
    assert case.expected_tool_calls == []  # a bad run's tool calls are not what to expect
    # --expected given on the command line wins over the label's
    ok(store_target, "promote", bad[:8], "--suite", "given", "--expected", "21")
    assert _case(store_target, "given")[0].expected_output == "21"
    # --where over the latest label: only the bad run
    out = ok(store_target, "promote", "--where", "label = 'bad'", "--suite", "bad-ones")
    assert out.startswith("1 new cases in suite 'bad-ones'")
    [case] = _case(store_target, "bad-ones")
    assert case.source_run_id == bad and case.expected_output == "Paris: 21 °C"
    ok(store_target, "promote", "--where", "label IS NULL AND query <> ''", "--suite", "unlabelled")
    unlabelled = sorted(c.source_run_id for c in _case(store_target, "unlabelled"))
    assert plain in unlabelled and unlabelled == sorted(set(runs["weather"]) - {bad, good})
    # a good run is a reference run: its answer is what is expected
    ok(store_target, "promote", good, "--suite", "good")
    [case] = _case(store_target, "good")
    assert case.source_kind == "reference_run" and "foggy" in (case.expected_output or "")


def test_monitor_status_says_how_often_it_agreed(store_target: str, tmp_path: Path) -> None:
    runs = _runs(store_target)
    checks = tmp_path / "foggy.yaml"
    checks.write_text("checks:\n  - kind: regex\n    pattern: foggy\n")
    ok(store_target, "monitor", "create", "foggy", "--checks", str(checks))
    assert "0 of 0 labelled runs" in ok(store_target, "monitor", "status", "foggy")
    ok(store_target, "monitor", "run")
    passed_bad, passed_good = runs["weather"][:2]  # the monitor passed both
    [failed_bad, failed_good] = runs["empty"]  # no answer: the monitor failed both
    for run, verdict in [
        (passed_bad, "--good"),  # then changed: the latest label counts
        (passed_bad, "--bad"),
        (passed_good, "--good"),
        (failed_bad, "--bad"),
        (failed_good, "--good"),
    ]:
        ok(store_target, "label", run, verdict)
    out = ok(store_target, "monitor", "status", "foggy")
    assert "people's labels: agreed 2 of 4 labelled runs" in out
    data = json.loads(ok(store_target, "monitor", "status", "foggy", "-f", "json"))
    assert (data["agreed_with_labels"], data["labelled_runs"]) == (2, 4)


def test_a_labelled_run_outlives_prune_and_moves_with_store_copy(
    tmp_path: Path,
    pg_url: str,
) -> None:
    target = str(tmp_path / "t.duckdb")
    runs = _runs(target)
    kept = runs["weather"][0]
    ok(target, "label", kept, "--bad", "--note", "keep me")
    out = ok(target, "prune", "--older-than", "1d")
    assert "kept 1 older runs that cases, eval runs or labels refer to" in out
    assert _listed(target) == [kept]
    ok(target, "store", "copy", "--to", pg_url)
    with Store.open(pg_url) as store:
        [label] = store.list_labels(kept)
        assert (label.verdict, label.note, label.author) == ("bad", "keep me", "alice")
