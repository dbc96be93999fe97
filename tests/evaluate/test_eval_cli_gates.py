"""Gates that tolerate noise (issue 55 item 9): ``eval --fail-under RATE``,
``--max-regressions N`` against the baseline eval run, Fisher's exact test on ``--repeat``."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_fixtures import cli, eval_json

from tracereplay.evaluate.gates import CaseChange
from tracereplay.scoring.significance import fisher_exact
from tracereplay.store.open import open_store


@pytest.mark.parametrize(
    ("table", "p"),
    [
        ([[3, 1], [1, 3]], 0.4857),  # the tea-tasting lady
        ([[8, 2], [1, 5]], 0.0350),
        ([[1, 9], [11, 3]], 0.0028),  # scipy.stats.fisher_exact's own example
        ([[0, 5], [5, 0]], 0.0079),
        ([[0, 3], [3, 0]], 0.1),
        ([[2, 2], [2, 2]], 1.0),
        ([[0, 0], [0, 0]], 1.0),
    ],
)
def test_fisher_exact_two_sided_matches_known_values(table: list[list[int]], p: float) -> None:
    assert fisher_exact(table) == pytest.approx(p, abs=5e-5)


def test_a_regression_over_repetitions_counts_only_when_significant() -> None:
    noisy = CaseChange("c", 1, True, (2, 3), (3, 3), fisher_exact([[2, 1], [3, 0]]))
    clear = CaseChange("c", 1, True, (0, 10), (10, 10), fisher_exact([[0, 10], [10, 0]]))
    once = CaseChange("c", 1, True, (0, 1), (1, 1), None)
    fixed = CaseChange("c", 1, False, (1, 1), (0, 1), None)
    assert [x.counts for x in (noisy, clear, once, fixed)] == [False, True, True, False]


def _fail_one_case(db: Path) -> None:
    """Case 1 of the weather suite now expects what its run never said: it fails."""
    with open_store(db) as store:
        store.con.execute("UPDATE eval_cases SET expected_output = 'snowstorm' WHERE seq = 1")


def _add_erroring_case(db: Path) -> None:
    result = cli(db, "case", "add", "--suite", "weather", "--query", "Any recording?")
    assert result.exit_code == 0, result.output


def test_fail_under_exits_0_at_or_above_the_rate_and_1_below(db: Path) -> None:
    _add_erroring_case(db)  # 3 of 4 pass: 75%
    plain = cli(db, "eval", "weather")
    assert plain.exit_code == 1, plain.output  # no gate: any case not passed
    loose = cli(db, "eval", "weather", "--fail-under", "50")
    assert loose.exit_code == 0, loose.output
    assert "pass rate 75.0% at or above --fail-under 50%" in loose.output
    exact = cli(db, "eval", "weather", "--fail-under", "75")
    assert exact.exit_code == 0, exact.output
    strict = cli(db, "eval", "weather", "--fail-under", "100")
    assert strict.exit_code == 1, strict.output
    assert "below --fail-under 100%" in strict.output


@pytest.mark.parametrize("value", ["101", "-1", "nan"])
def test_a_bad_fail_under_is_one_line(db: Path, value: str) -> None:
    result = cli(db, "eval", "weather", "--fail-under", value)
    assert result.exit_code == 2
    assert "--fail-under must be a pass rate in percent, 0 to 100" in result.output


def test_a_negative_max_regressions_is_one_line(db: Path) -> None:
    result = cli(db, "eval", "weather", "--max-regressions", "-1")
    assert result.exit_code == 2
    assert "--max-regressions must be a whole number, 0 or more" in result.output


def test_max_regressions_counts_cases_that_passed_in_the_baseline(db: Path, tmp_path: Path) -> None:
    first = cli(db, "eval", "weather", "--max-regressions", "0")
    assert first.exit_code == 0, first.output
    assert "regressions: 0 (max 0): no baseline" in first.output
    baseline = eval_json(db, tmp_path, "weather", exit_code=0)["eval_run"]["eval_run_id"]
    _fail_one_case(db)
    _add_erroring_case(db)  # not in the baseline: added, not a regression
    one = cli(db, "eval", "weather", "--max-regressions", "1", "--label", "x")
    assert one.exit_code == 0, one.output  # 1 regression, 1 error: tolerated
    assert f"regressions: 1 (max 1) against eval run {baseline}" in one.output
    with open_store(db) as store:  # make it not completed: not a baseline
        store.con.execute("UPDATE eval_runs SET status = 'interrupted' WHERE label = 'x'")
    doc = eval_json(db, tmp_path, "weather", "--max-regressions", "0", exit_code=1)
    gates = doc["gates"]
    assert (gates["regressions"], gates["failed"], gates["baseline_eval_run"]) == (
        1,
        True,
        baseline,
    )
    [change] = gates["changes"]
    assert change["seq"] == 1 and change["regressed"] and change["p_value"] is None
    # the baseline is the latest completed eval run: now the one just made, failing case 1 too
    again = cli(db, "eval", "weather", "--max-regressions", "0")
    assert again.exit_code == 0, again.output  # still failing is no regression
    assert "regressions: 0 (max 0) against eval run" in again.output
    assert baseline not in again.output
    # the rate gate and the regression gate: either one failing exits 1
    both = cli(db, "eval", "weather", "--max-regressions", "5", "--fail-under", "90")
    assert both.exit_code == 1, both.output


def test_repeat_gives_each_changed_case_its_fisher_p_value(db: Path, tmp_path: Path) -> None:
    eval_json(db, tmp_path, "weather", "--repeat", "3", exit_code=0)
    _fail_one_case(db)
    doc = eval_json(db, tmp_path, "weather", "--repeat", "3", "--max-regressions", "0", exit_code=0)
    [case] = [c for c in doc["cases"] if c["seq"] == 1]
    assert case["status"] == "FAILED" and case["p_value"] == pytest.approx(0.1)
    [change] = doc["gates"]["changes"]
    assert (change["passes"], change["baseline_passes"], change["counted"]) == (0, 3, False)
    assert doc["gates"]["regressions"] == 0  # 0/3 against 3/3: p=0.1, not significant
    assert all("p_value" not in c for c in doc["cases"] if c["seq"] != 1)
    out = cli(db, "eval", "weather", "--repeat", "3", "--max-regressions", "0").output
    # against the failing run just before: the verdict did not change, no p-value
    assert "regressions: 0 (max 0)" in out and "p=" not in out


def test_diff_and_the_markdown_summary_show_p_values_and_honour_the_gates(db: Path) -> None:
    assert cli(db, "eval", "weather", "--repeat", "3").exit_code == 0
    _fail_one_case(db)
    assert cli(db, "eval", "weather", "--repeat", "3").exit_code == 1
    table = cli(db, "diff", "--last", "weather")
    assert table.exit_code == 1 and "p=0.1" in table.output  # no gate: any regression
    gated = cli(db, "diff", "--last", "weather", "--max-regressions", "0")
    assert gated.exit_code == 0, gated.output  # 0/3 against 3/3 is not significant
    assert "regressions: 0 (max 0) against eval run" in gated.output
    md = cli(db, "diff", "--last", "weather", "-f", "markdown", "--fail-under", "90")
    assert md.exit_code == 1  # 2 of 3 passed: 66.7% < 90%
    assert "**regressed** (p=0.1)" in md.output
    assert "Gates **failed**:" in md.output and "below --fail-under 90%" in md.output
    report = cli(db, "report", "-s", "weather", "-f", "markdown", "--max-regressions", "0")
    assert report.exit_code == 0, report.output
    assert "Gates passed:" in report.output and "(p=0.1)" in report.output
    wrong = cli(db, "report", "-s", "weather", "--fail-under", "90")
    assert wrong.exit_code == 2 and "go with --format markdown" in wrong.output
