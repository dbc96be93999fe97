"""Suite files: lossless YAML/JSON round trips, and every problem reported with its line."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.models import CheckSpec, Document, EvalCase, EvalExpectedToolCall, EvalSuite
from tracereplay.promote.suite_file import SuiteFileError, dump_suite, load_checks, load_suite

text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
lines = st.lists(
    st.one_of(text, st.sampled_from(["", " ", "- x", "yes", "null", "1.5", "#", "|"])), max_size=4
).map("\n".join)
names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)
timestamps = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
checks = st.lists(
    st.sampled_from(
        [
            CheckSpec(kind="status"),
            CheckSpec(kind="containsExpected", caseSensitive=True),
            CheckSpec(kind="nonEmpty", name="long enough", minLength=20),
            CheckSpec(kind="keywords", values=["refund", "days"]),
        ]
    ),
    unique_by=lambda c: c.label,
    max_size=4,
)


@st.composite
def suites(draw: st.DrawFn) -> tuple[EvalSuite, list[EvalCase]]:
    suite = EvalSuite(
        id=str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1)))),
        name=draw(text.map(lambda t: " ".join(t.split())).filter(bool)),
        description=draw(lines),
        agent_name=draw(text),
        checks=draw(checks),
        required_parameters=draw(st.lists(names, unique=True, max_size=3)),
        metadata=draw(st.dictionaries(text, json_value, max_size=3)),
        created_at=draw(st.none() | timestamps),
        updated_at=draw(st.none() | timestamps),
    )
    seqs = draw(st.lists(st.integers(0, 10_000), unique=True, max_size=4))
    cases = [
        EvalCase(
            suite_id=suite.id,
            seq=seq,
            query=draw(lines.filter(lambda q: bool(q.strip()))),
            context=draw(st.lists(st.builds(Document, name=text, content=lines), max_size=2)),
            expected_output=draw(st.none() | lines),
            expected_tool_calls=draw(
                st.lists(
                    st.builds(
                        EvalExpectedToolCall,
                        name=names,
                        arguments=st.none() | st.dictionaries(text, json_value, max_size=3),
                    ),
                    max_size=2,
                )
            ),
            parameters=draw(st.none() | st.dictionaries(names, text, max_size=2)),
            promoted_at=draw(st.none() | timestamps),
            source_kind=draw(
                st.none() | st.sampled_from(["failed_run", "negative_score", "reference_run"])
            ),
            source_run_id=f"run-{seq}" if draw(st.booleans()) else None,
            checks=draw(st.none() | checks),
            tags=draw(st.lists(text, max_size=2)),
            metadata=draw(st.dictionaries(text, json_value, max_size=2)),
        )
        for seq in seqs
    ]
    return suite, cases


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=suites())
def test_files_round_trip_losslessly(fmt: str, data: tuple[EvalSuite, list[EvalCase]]) -> None:
    suite, cases = data
    written = dump_suite(suite, cases, fmt)  # type: ignore[arg-type]
    parsed = load_suite(written, fmt)  # type: ignore[arg-type]
    assert parsed.suite == suite
    assert [p.case for p in parsed.cases] == sorted(cases, key=lambda c: c.seq)
    assert dump_suite(parsed.suite, [p.case for p in parsed.cases], fmt) == written  # type: ignore[arg-type]


BAD_YAML = """\
format: tracereplay-suite/1
name: support
colour: blue
checks:
  - kind: containsExpected
    caseSensitive: "yes"
  - kind: nosuchcheck
cases:
  - query: fine
  - seq: 1
    expected_tool_calls:
      - arguments: {city: Paris}
  - id: not-a-uuid
    query: "   "
    seq: 1
    context: "-----BEGIN TRACON DOCUMENT-----\\nname: a\\n"
"""


def test_every_problem_is_reported_with_its_line() -> None:
    with pytest.raises(SuiteFileError) as info:
        load_suite(BAD_YAML, "yaml", "suite.yaml")
    got = info.value.lines()
    expected = [
        "suite.yaml:3: colour: unknown field",
        "suite.yaml:5: checks[0]: containsExpected: option 'caseSensitive'",
        "suite.yaml:7: checks[1].kind: unknown check kind 'nosuchcheck'",
        "suite.yaml:10: cases[1].query: missing (required)",
        "suite.yaml:12: cases[1].expected_tool_calls[0].name: missing (required)",
        "suite.yaml:13: cases[2].id: not a UUID: 'not-a-uuid'",
        "suite.yaml:14: cases[2].query: query must not be empty",
        "suite.yaml:16: cases[2].context: document text line 1: block is not closed",
    ]
    assert len(got) == len(expected), got
    for line, start in zip(got, expected):
        assert line.startswith(start), (line, start)
    assert str(info.value) == "suite.yaml: 8 problems (nothing was changed)"


def test_duplicates_across_cases_and_keys_are_problems() -> None:
    text = (
        "name: s\ncases:\n"
        "  - {query: a, seq: 0, source_run_id: r1}\n"
        "  - {query: b, seq: 0, source_run_id: r1}\n"
        "  - {query: c, query: d}\n"
    )
    with pytest.raises(SuiteFileError) as info:
        load_suite(text, "yaml", "s.yaml")
    assert info.value.lines() == [
        "s.yaml:4: cases[1].seq: 0 is also the seq of cases[0]",
        "s.yaml:4: cases[1].source_run_id: 'r1' is also the source_run_id of cases[0]",
        "s.yaml:5: cases[2].query: this key is given twice",
    ]


def test_json_problems_have_lines_too_and_syntax_errors_are_one_line() -> None:
    text = '{\n  "name": "s",\n  "cases": [\n    {"query": 5}\n  ]\n}\n'
    with pytest.raises(SuiteFileError) as info:
        load_suite(text, "json", "s.json")
    assert info.value.lines() == ["s.json:4: cases[0].query: Input should be a valid string"]
    with pytest.raises(SuiteFileError, match=r"s.json:2: not valid JSON: Expecting"):
        load_suite('{"name": "s",\n  cases: []}', "json", "s.json")
    with pytest.raises(SuiteFileError, match=r"^s.yaml:3: not valid YAML: .*node content"):
        load_suite("name: s\ncases: [\n", "yaml", "s.yaml")


def test_hand_written_files_may_leave_out_ids_seqs_and_use_text_context() -> None:
    text = (
        "name: handmade\ncases:\n"
        "  - query: first\n    seq: 5\n"
        "  - query: second\n    context: |\n      Refunds take 30 days.\n"
    )
    parsed = load_suite(text, "yaml")
    first, second = (p.case for p in parsed.cases)
    assert (first.seq, second.seq) == (5, 6)
    assert second.context == [Document(name="context", content="Refunds take 30 days.\n")]
    assert not parsed.id_given and not parsed.cases[1].id_given


def test_checks_files_list_or_mapping() -> None:
    assert load_checks("- kind: status\n- kind: nonEmpty\n  minLength: 3\n", "yaml") == [
        CheckSpec(kind="status"),
        CheckSpec(kind="nonEmpty", minLength=3),
    ]
    assert load_checks('{"checks": [{"kind": "status"}]}', "json") == [CheckSpec(kind="status")]
    with pytest.raises(SuiteFileError) as info:
        load_checks("- kind: status\n- kind: status\n", "yaml", "c.yaml")
    assert info.value.lines()[0].startswith("c.yaml:2: [1].kind: check 'status' is defined twice")
