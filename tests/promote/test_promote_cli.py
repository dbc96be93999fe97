"""`tracereplay promote`: one run or every run matching --where, idempotently."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from promote_helpers import CliResult, add_runs, make_run, suite_and_cases

from tracereplay.models import Document
from tracereplay.store import Store
from tracereplay.store import suites as suite_store

Cli = Callable[..., CliResult]


def test_a_reference_run_becomes_a_case_with_its_answer_and_tool_calls(db: Path, cli: Cli) -> None:
    docs = [Document(name="policy.md", content="Refunds: 30 days.")]
    run = make_run(0, context=docs, parameters={"tenant": "acme", "tier": 2})
    add_runs(db, [run])
    result = cli("promote", run.run_id[:13], "--tag", "smoke", "--tag", "weather")
    assert result.exit_code == 0, result.stderr
    case_id = result.stdout.strip()
    suite, [case] = suite_and_cases(db, "weather_agent")  # named after the agent
    assert case.id == case_id and case.seq == 0 and case.suite_id == suite.id
    assert [c.kind for c in suite.checks] == ["status", "containsExpected", "toolCallArgsMatch"]
    assert suite.agent_name == "weather_agent"
    assert case.source_kind == "reference_run" and case.source_run_id == run.run_id
    assert case.query == run.query and case.context == docs
    assert case.expected_output == "It is sunny in Paris."
    assert [(t.name, t.arguments) for t in case.expected_tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert case.parameters == {"tenant": "acme", "tier": "2"}
    assert case.tags == ["smoke", "weather"] and case.promoted_at is not None
    assert case.metadata["source_trace_id"] == run.trace_id
    assert "new suite" in result.stderr


def test_promoting_again_returns_the_same_case(db: Path, cli: Cli) -> None:
    run = make_run(0)
    add_runs(db, [run])
    first = cli("promote", run.run_id)
    again = cli("promote", run.run_id, "--kind", "negative_score")  # options do not matter then
    assert again.exit_code == 0 and again.stdout == first.stdout
    assert "already case #0" in again.stderr
    _, cases = suite_and_cases(db, "weather_agent")
    assert len(cases) == 1 and cases[0].source_kind == "reference_run"
    # by trace id too (a trace holding one run)
    assert cli("promote", run.trace_id).stdout == first.stdout


def test_a_failed_run_expects_nothing_unless_told(db: Path, cli: Cli) -> None:
    failed = make_run(0, status="failed", response="", error="LLM timed out")
    other = make_run(1, status="max_rounds_exceeded")
    add_runs(db, [failed, other])
    assert cli("promote", failed.run_id, "--suite", "regressions").exit_code == 0
    told = cli(
        "promote", other.run_id, "--suite", "regressions",
        "--expected-output", "sunny", "--expected-tools",
    )  # fmt: skip
    assert told.exit_code == 0, told.stderr
    _, (a, b) = suite_and_cases(db, "regressions")
    assert (a.seq, a.source_kind, a.expected_output, a.expected_tool_calls) == (
        0,
        "failed_run",
        None,
        [],
    )
    assert a.metadata["source_error"] == "LLM timed out"
    assert (b.seq, b.source_kind, b.expected_output) == (1, "failed_run", "sunny")
    assert [t.name for t in b.expected_tool_calls] == ["get_weather"]


def test_promoting_a_failed_run_says_which_checks_will_really_judge(db: Path, cli: Cli) -> None:
    """A case with nothing expected passes containsExpected and toolCallArgsMatch with almost
    any answer: promote says so, and how to give it an expected output."""
    failed = make_run(0, status="failed", response="", error="LLM timed out")
    add_runs(db, [failed])
    result = cli("promote", failed.run_id[:8], "--suite", "regressions")
    assert result.exit_code == 0, result.stderr
    note = " ".join(result.stderr.split())
    assert "no expected output and no expected tool calls" in note
    assert "only status will judge it" in note
    assert "containsExpected is skipped (nothing is expected)" in note
    assert "toolCallArgsMatch passes (no expected tool calls)" in note
    assert "--expected TEXT" in note and "--expected-tool NAME[:JSON]" in note
    assert f"tracereplay case rm {result.stdout.strip()[:8]}" in note
    # a reference run expects its own answer and calls: nothing to say
    ok = make_run(1)
    add_runs(db, [ok])
    quiet = cli("promote", ok.run_id, "--suite", "regressions")
    assert "will judge" not in quiet.stderr


def test_promote_takes_an_expected_output_and_expected_tool_calls(db: Path, cli: Cli) -> None:
    failed = make_run(0, status="failed", response="", error="LLM timed out")
    add_runs(db, [failed])
    result = cli(
        "promote", failed.run_id, "--suite", "regressions", "--expected", "sunny",
        "--expected-tool", 'get_weather:{"city": "Paris"}', "--expected-tool", "get_time",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "will judge" not in result.stderr
    _, [case] = suite_and_cases(db, "regressions")
    assert case.expected_output == "sunny"
    assert [(t.name, t.arguments) for t in case.expected_tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_time", None)
    ]  # fmt: skip
    both = cli("promote", failed.run_id, "--suite", "other", "--expected-tool", "a",
               "--expected-tools")  # fmt: skip
    assert both.exit_code == 2
    assert both.error_lines == [
        "error: give --expected-tool or --expected-tools/--no-expected-tools, not both"
    ]


def test_promote_where_counts_the_cases_that_expect_nothing(db: Path, cli: Cli) -> None:
    add_runs(db, [make_run(i, status="failed", response="") for i in range(3)])
    result = cli("promote", "--where", "status = 'failed'", "--suite", "regressions")
    assert result.exit_code == 0, result.stderr
    note = " ".join(result.stderr.split())
    assert "3 of the new cases have no expected output and no expected tool calls" in note
    assert "only status will judge them" in note


def test_kind_is_explicit_when_given(db: Path, cli: Cli) -> None:
    a, b = make_run(0), make_run(1)
    add_runs(db, [a, b])
    assert cli("promote", a.run_id, "--kind", "negative-score").exit_code == 0
    assert cli("promote", b.run_id, "--kind", "reference_run", "--no-expected-tools").exit_code == 0
    _, (ca, cb) = suite_and_cases(db, "weather_agent")
    assert ca.source_kind == "negative_score" and ca.expected_output is None
    assert ca.expected_tool_calls == []
    assert cb.expected_output == "It is sunny in Paris." and cb.expected_tool_calls == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["zzzz"], "no run matches 'zzzz'"),
        (["00000000"], "is ambiguous"),
        (["00000000-0000-0000-0000-000000000003"], "has no query"),
        (["00000000-0000-0000-0000-000000000001", "--kind", "flaky"], "unknown kind 'flaky'"),
        (["00000000-0000-0000-0000-000000000001", "--suite", " "], "suite name must be"),
        (
            ["00000000-0000-0000-0000-000000000001", "--limit", "3"],
            "--limit only applies with --where",
        ),
        ([], "give a RUN_ID, --where PREDICATE or --session ID"),
        (["--where", "status = 'failed'"], "--where needs --suite"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    db: Path, cli: Cli, args: list[str], message: str
) -> None:
    add_runs(db, [make_run(0), make_run(1), make_run(2, query="")])
    result = cli("promote", *args)
    assert result.exit_code == 2, result
    assert len(result.error_lines) == 1 and message in result.error_lines[0], result.stderr
    assert result.stderr.count("\n") == 1
    with Store.open(db) as store:
        assert suite_store.list_suites(store) == []


def test_bulk_promotion_is_idempotent_and_counts_what_is_new(db: Path, cli: Cli) -> None:
    runs = [make_run(i, status="failed" if i % 2 else "success") for i in range(6)]
    runs.append(make_run(6, status="failed", query=""))
    add_runs(db, runs)
    first = cli("promote", "--where", "status = 'failed'", "--suite", "failures", "--limit", "2")
    assert first.exit_code == 0, first.stderr
    assert first.stdout.startswith("2 new cases in suite 'failures' (new suite): 2 runs matched")
    second = cli("promote", "--where", "status = 'failed'", "--suite", "failures", "--tag", "bulk")
    assert second.stdout.startswith("1 new cases in suite 'failures': 4 runs matched, 2 already")
    assert (
        "1 skipped" in second.stdout and f"skipped run {runs[6].run_id}: no query" in second.stderr
    )
    third = cli("promote", "--where", "status = 'failed'", "--suite", "failures")
    assert third.stdout.startswith("0 new cases")
    suite, cases = suite_and_cases(db, "failures")
    assert [(c.seq, c.source_run_id) for c in cases] == [
        (0, runs[1].run_id),
        (1, runs[3].run_id),
        (2, runs[5].run_id),
    ]  # fmt: skip  (oldest first, seq in promotion order)
    assert all(c.source_kind == "failed_run" for c in cases) and cases[2].tags == ["bulk"]
    assert suite.agent_name == "weather_agent"
    # a single promote of a run already promoted in bulk returns that case
    assert cli("promote", runs[3].run_id, "--suite", "failures").stdout.strip() == cases[1].id
    none = cli("promote", "--where", "agent_name = 'nobody'", "--suite", "empty")
    assert none.exit_code == 0 and none.stdout.startswith("0 new cases: no recorded run matches")


@pytest.mark.parametrize(
    ("predicate", "message"),
    [
        ("nocolumn = 1", 'Binder Error: Referenced column "nocolumn" not found'),
        ("status = ", "Parser Error: syntax error"),
        ("1=1); DROP TABLE runs; SELECT (1", "must be one SQL condition"),
        ("1=1; DELETE FROM runs", "Parser Error"),
        ("run_id IN (SELECT * FROM query('DELETE FROM runs RETURNING run_id'))", "single SELECT"),
        ("", "needs a SQL predicate"),
    ],
)
def test_a_bad_predicate_is_duckdbs_message_and_writes_nothing(
    db: Path, cli: Cli, predicate: str, message: str
) -> None:
    add_runs(db, [make_run(0), make_run(1)])
    result = cli("promote", "--where", predicate, "--suite", "x")
    assert result.exit_code == 2
    assert len(result.error_lines) == 1 and message in result.error_lines[0], result.stderr
    assert "LINE" not in result.stderr
    with Store.open(db) as store:
        assert store.count("runs") == 2 and suite_store.list_suites(store) == []


def test_predicates_may_use_other_tables_and_semicolons_in_strings(db: Path, cli: Cli) -> None:
    add_runs(db, [make_run(0, query="a; b"), make_run(1, tools=[("lookup", {})])])
    by_text = cli("promote", "--where", "query LIKE '%;%'", "--suite", "semi")
    assert by_text.stdout.startswith("1 new cases"), by_text.stderr
    by_tool = cli(
        "promote", "--where",
        "run_id IN (SELECT run_id FROM tool_calls WHERE tool_name = 'lookup')",
        "--suite", "lookups",
    )  # fmt: skip
    assert by_tool.stdout.startswith("1 new cases"), by_tool.stderr


def test_cases_are_queryable_with_sql_next_to_their_runs(db: Path, cli: Cli) -> None:
    add_runs(db, [make_run(0), make_run(1, status="failed")])
    cli("promote", "--where", "true", "--suite", "all")
    with Store.open(db) as store:
        rows = store.con.execute(
            "SELECT s.name, c.seq, c.source_kind, r.status, json_extract_string(c.expected_tool_calls, '$[0].name')"
            " FROM eval_cases c JOIN eval_suites s USING (suite_id)"
            " JOIN runs r ON r.run_id = c.source_run_id ORDER BY c.seq"
        ).fetchall()
    assert rows == [
        ("all", 0, "reference_run", "success", "get_weather"),
        ("all", 1, "failed_run", "failed", None),
    ]


def test_promote_output_is_plain_text(db: Path, cli: Cli) -> None:
    add_runs(db, [make_run(0, agent="[bold]agent[/bold]")])
    result = cli("promote", "00000000-0000-0000-0000-000000000001")
    assert result.exit_code == 0
    assert "suite '[bold]agent[/bold]'" in " ".join(result.stderr.split())
    listed = json.loads(cli("suite", "list", "--format", "json").stdout)
    assert listed[0]["name"] == "[bold]agent[/bold]" and listed[0]["cases"] == 1
