"""Case-level scoring (status precedence, mean score, reason), repeats, summaries, recorded mode."""

from __future__ import annotations

import pytest
from eval_check_helpers import call, expect, make_case, make_run, make_subject
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.evaluate import (
    case_status,
    error_result,
    evaluate_recorded,
    merge_repeats,
    result_from_scores,
    score_case,
    score_recorded,
    summarize,
)
from tracereplay.models import AgentResult, CheckSpec, EvaluationResult, ScoreResult, Status

CHECKS = [
    CheckSpec(kind="containsExpected"),
    CheckSpec(kind="regex", pattern=r"\d+ ?C"),
    CheckSpec(kind="toolCallArgsMatch"),
]


def _valid(result: EvaluationResult) -> EvaluationResult:
    EvaluationResult.model_validate(result.model_dump())  # built unvalidated: must still be valid
    return result


def test_all_passed():
    subject = make_subject(
        "Sunny, 21 C",
        expected="sunny",
        calls=[call("get_weather", city="Paris")],
        expected_calls=[expect("get_weather", {"city": "Paris"})],
    )
    r = _valid(score_case(subject.case, CHECKS, subject, duration_ms=12.5, run_id="r1"))
    assert (r.status, r.score, r.reason) == (Status.PASSED, 1.0, "all 3 checks passed")
    assert [c.check for c in r.checks] == ["containsExpected", "regex", "toolCallArgsMatch"]
    assert (r.case_id, r.duration_ms, r.run_id) == (subject.case.id, 12.5, "r1")


def test_failed_check_fails_the_case_and_score_is_the_mean():
    subject = make_subject("Rainy, 12 C", expected="sunny")
    r = _valid(score_case(subject.case, CHECKS, subject))
    assert r.status is Status.FAILED
    assert r.score == pytest.approx(2 / 3)
    assert r.reason == (
        "containsExpected: response does not contain the expected text 'sunny';"
        " the response: 'Rainy, 12 C'"
    )


def test_failed_wins_over_error_and_an_errored_check_scores_0_in_the_mean():
    checks = [*CHECKS, CheckSpec(kind="regex", name="bad", pattern="(")]
    subject = make_subject("Rainy, 12 C", expected="sunny")
    r = _valid(score_case(subject.case, checks, subject))
    assert r.status is Status.FAILED
    assert r.score == pytest.approx(2 / 4)
    assert "bad (error): regex: invalid regular expression" in r.reason


def test_error_without_failure_is_an_error():
    checks = [CheckSpec(kind="nonEmpty"), CheckSpec(kind="maxLatencyMs", limit=10)]
    subject = make_subject("hello")
    r = _valid(score_case(subject.case, checks, subject))
    assert r.status is Status.ERROR and r.score == 0.0  # an ERROR case scores 0
    assert r.reason.startswith("maxLatencyMs (error): the run's duration is unknown")


def test_an_error_case_scores_0():
    subject = make_subject("hello")
    r = score_case(subject.case, [CheckSpec(kind="nope")], subject)
    assert r.status is Status.ERROR and r.score == 0.0
    assert error_result("c", "timed out after 5s").score == 0.0


def test_no_checks_is_an_error():
    subject = make_subject("hello")
    r = _valid(score_case(subject.case, [], subject))
    assert r.status is Status.ERROR and "no checks configured" in r.reason


def test_case_checks_override_the_suite():
    case = make_case("sunny", checks=[CheckSpec(kind="nonEmpty")])
    subject = make_subject("rain")
    subject.case = case
    r = score_case(case, CHECKS, subject)
    assert r.status is Status.PASSED and [c.check for c in r.checks] == ["nonEmpty"]
    case_no_checks = make_case("sunny", checks=[])
    assert score_case(case_no_checks, CHECKS, subject).status is Status.ERROR


def test_case_status_precedence():
    p = ScoreResult(check="a", score=1, passed=True, status=Status.PASSED)
    f = ScoreResult(check="b", score=0, passed=False, status=Status.FAILED)
    e = ScoreResult(check="c", status=Status.ERROR)
    assert case_status([p, p]) is Status.PASSED
    assert case_status([p, e]) is Status.ERROR
    assert case_status([e, f, p]) is Status.FAILED
    assert case_status([]) is Status.PASSED


def test_the_stored_reason_has_a_cap_and_each_check_its_whole_reason():
    """The joined reason is capped for storage (4000 characters); what the CLI prints is each
    failing check's whole explanation (``check_reasons``), never cut."""
    from tracereplay.scoring.verdicts import check_reasons

    subject = make_subject("x" * 10, expected="y" * 2000)
    r = score_case(
        subject.case, [CheckSpec(kind="exact", name=f"e{i}") for i in range(20)], subject
    )
    assert len(r.reason) <= 4000
    lines = check_reasons(r)
    assert len(lines) == 20 and all(line.startswith(f"e{i}: ") for i, line in enumerate(lines))
    assert [line.split(": ", 1)[1] for line in lines] == [c.explanation for c in r.checks]


def _res(status: Status, score: float | None, reason: str = "") -> EvaluationResult:
    return EvaluationResult(case_id="c", status=status, score=score, reason=reason, duration_ms=1)


def test_merge_repeats():
    ok = _res(Status.PASSED, 1.0)
    assert merge_repeats([ok]) is ok
    merged = _valid(merge_repeats([ok, ok, ok]))
    assert (merged.status, merged.score, merged.reason) == (
        Status.PASSED,
        1.0,
        "all 3 repetitions passed",
    )
    assert merged.duration_ms == 3
    merged = _valid(
        merge_repeats([ok, _res(Status.ERROR, None, "boom"), _res(Status.FAILED, 0.5, "bad")])
    )
    assert merged.status is Status.FAILED
    assert merged.score == pytest.approx((1.0 + 0.0 + 0.5) / 3)  # the ERROR repetition scores 0
    assert merged.reason == "2 of 3 repetitions did not pass; repetition 3: bad"
    merged = merge_repeats([ok, _res(Status.ERROR, None, "timed out after 5s")])
    assert merged.status is Status.ERROR and "repetition 2: timed out" in merged.reason
    with pytest.raises(ValueError):
        merge_repeats([])


def test_summarize():
    s = summarize(
        [
            _res(Status.PASSED, 1.0),
            _res(Status.PASSED, 0.8),
            _res(Status.FAILED, 0.3),
            _res(Status.ERROR, None),
        ]
    )
    assert (s.total, s.passed, s.failed, s.errored) == (4, 2, 1, 1)
    assert s.pass_rate == 0.5
    assert s.aggregate_score == pytest.approx((1.0 + 0.8 + 0.3 + 0.0) / 4)  # every case counts
    empty = summarize([])
    assert (empty.total, empty.pass_rate, empty.aggregate_score) == (0, 0.0, None)


class TestRecorded:
    def test_scores_each_case_against_its_source_run(self):
        good = make_run(
            AgentResult(
                response="Sunny, 21 C",
                tool_calls=[call("get_weather", city="Paris")],
            ),
            run_id="run-good",
        )
        bad = make_run(AgentResult(response="Rain"), run_id="run-bad")
        cases = [
            make_case(
                "sunny", [expect("get_weather", {"city": "Paris"})], seq=0, source_run_id="run-good"
            ),
            make_case("sunny", seq=1, source_run_id="run-bad"),
            make_case("sunny", seq=2, source_run_id="run-gone"),
            make_case("sunny", seq=3),
        ]
        runs = {r.run_id: r for r in (good, bad)}
        results = [_valid(r) for r in evaluate_recorded(cases, CHECKS, runs)]
        assert [r.status for r in results] == [
            Status.PASSED,
            Status.FAILED,
            Status.ERROR,
            Status.ERROR,
        ]
        assert [r.case_id for r in results] == [c.id for c in cases]
        assert results[0].run_id == "run-good" and results[0].duration_ms >= 0
        assert results[2].reason == "source run run-gone of case #2 was not found"
        assert "case #3 has no source run (hand-written)" in results[3].reason
        # a lookup function works like a mapping
        again = list(evaluate_recorded(cases[:2], CHECKS, runs.get))
        assert [r.status for r in again] == [Status.PASSED, Status.FAILED]

    def test_budgets_see_the_recorded_run(self):
        rec = make_run(
            AgentResult(response="ok"), duration_ms=3000, input_tokens=10, output_tokens=5
        )
        case = make_case("ok", source_run_id=rec.run_id)
        checks = [CheckSpec(kind="maxLatencyMs", limit=2000), CheckSpec(kind="maxTokens", limit=20)]
        r = score_recorded(case, checks, rec)
        assert r.status is Status.FAILED
        assert [c.status for c in r.checks] == [Status.FAILED, Status.PASSED]

    def test_missing_run_without_source_is_an_error(self):
        r = score_recorded(make_case("x"), CHECKS, None)
        assert r.status is Status.ERROR and r.checks == []


def test_error_result():
    r = _valid(error_result("case-1", "agent raised ValueError: x", duration_ms=3, run_id="r"))
    assert (r.status, r.score, r.reason, r.run_id) == (
        Status.ERROR,
        0.0,
        "agent raised ValueError: x",
        "r",
    )


_statuses = st.sampled_from([Status.PASSED, Status.FAILED, Status.ERROR])


@st.composite
def _check_results(draw: st.DrawFn) -> ScoreResult:
    status = draw(_statuses)
    score = None if status is Status.ERROR else draw(st.floats(0.0, 1.0))
    return ScoreResult(check="c", status=status, passed=status is Status.PASSED, score=score)


@given(st.lists(_check_results(), min_size=1, max_size=8))
def test_the_case_score_counts_every_check_and_an_error_case_scores_0(scores) -> None:
    r = result_from_scores("c", scores)
    assert r.status is case_status(scores)
    if r.status is Status.ERROR:
        assert r.score == 0.0
    else:
        mean = sum(s.score if s.score is not None else 0.0 for s in scores) / len(scores)
        assert r.score == pytest.approx(mean)


@given(st.lists(st.tuples(_statuses, st.floats(0.0, 1.0)), min_size=1, max_size=20))
def test_the_aggregate_score_counts_every_case(cases) -> None:
    results = [_res(status, 0.0 if status is Status.ERROR else score) for status, score in cases]
    s = summarize(results)
    assert s.aggregate_score == pytest.approx(sum(r.score for r in results) / len(results))
    assert s.pass_rate == pytest.approx(
        sum(r.status is Status.PASSED for r in results) / len(results)
    )
