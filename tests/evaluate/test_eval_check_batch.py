"""Batch forms of the built-in checks give, row by row, exactly what the scalar checks give."""

from __future__ import annotations

import orjson
from eval_check_helpers import make_subject
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.checks import list_check_kinds
from tracereplay.checks.batch import SubjectBatch, run_check_batch
from tracereplay.evaluate import run_check
from tracereplay.models import CheckSpec, EvalExpectedToolCall, ToolCallRecord

#: every spec runs on each drawn list of subjects (drawing them is most of a test's cost: once
#: for all the specs, not once per spec), so each spec sees these many examples
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["Oslo", "oslo", "c", ""])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=6,
)
args = st.dictionaries(st.sampled_from(["city", "unit", "n"]), values, max_size=3)
names = st.sampled_from(["get_weather", "lookup", "search"])
texts = st.sampled_from(["", "  ", "It is 12 degrees in Oslo", "oslo", "ÉTÉ ß", "x\ny"]) | st.text(
    max_size=40
)


@st.composite
def subjects(draw):
    calls = draw(
        st.lists(
            st.builds(
                ToolCallRecord,
                round=st.just(1),
                tool_name=names,
                arguments=args,
                error=st.none() | st.just("boom"),
            ),
            max_size=3,
        )
    )
    expected_calls = draw(
        st.lists(
            st.builds(EvalExpectedToolCall, name=names, arguments=st.none() | args), max_size=3
        )
    )
    if calls and draw(st.booleans()):  # often expect exactly what was called
        expected_calls = [
            EvalExpectedToolCall(name=c.tool_name, arguments=dict(c.arguments)) for c in calls
        ]
    return make_subject(
        output=draw(texts),
        expected=draw(st.none() | texts),
        calls=calls,
        expected_calls=expected_calls,
        status=draw(st.sampled_from(["success", "failed", "max_rounds_exceeded"])),
    )


SPECS = [
    CheckSpec(kind="containsExpected"),
    CheckSpec(kind="containsExpected", caseSensitive=True),
    CheckSpec(kind="regex", pattern=r"\d+ degrees"),
    CheckSpec(kind="regex", pattern=r"(?P<city>[A-Z]\w+)", flags="i"),
    CheckSpec(kind="regex", pattern="(", name="broken"),
    CheckSpec(kind="nonEmpty"),
    CheckSpec(kind="nonEmpty", minLength=5),
    CheckSpec(kind="toolCallArgsMatch"),
    CheckSpec(kind="toolCallsPresent"),
    CheckSpec(kind="noToolErrors"),
    CheckSpec(kind="status"),
    CheckSpec(kind="exact"),  # no batch form: every row goes through the scalar check
]


def _rows(column, n):
    return [column.result(i).model_dump() for i in range(n)]


def test_every_batch_form_is_covered_here():
    with_batch = {k.kind for k in list_check_kinds() if k.batch is not None}
    assert with_batch and with_batch <= {s.kind for s in SPECS}


def _label(spec: CheckSpec) -> str:
    return spec.label + str(spec.options)


@SETTINGS
@given(st.lists(subjects(), min_size=1, max_size=6))
def test_batch_equals_scalar_for_subjects_in_memory(subjects):
    for spec in SPECS:
        batch = SubjectBatch.from_subjects(subjects)
        expected = [run_check(spec, s).model_dump() for s in subjects]
        assert _rows(run_check_batch(spec, batch), len(subjects)) == expected, _label(spec)


def _stored(subjects: list) -> SubjectBatch:
    """The columns recorded mode reads from the store: JSON text, parsed on first use."""
    return SubjectBatch(
        expected_output=[s.case.expected_output for s in subjects],
        response=[s.result.response for s in subjects],
        result_status=[s.result.status for s in subjects],
        expected_tool_calls_json=[
            orjson.dumps([e.to_dict() for e in s.case.expected_tool_calls]).decode()
            for s in subjects
        ],
        tool_calls_json=[
            orjson.dumps([t.__dict__ for t in s.result.tool_calls]).decode() for s in subjects
        ],
        loader=lambda rows: [subjects[i] for i in rows],
    )


@SETTINGS
@given(st.lists(subjects(), min_size=1, max_size=6))
def test_batch_equals_scalar_for_stored_json_columns(subjects):
    """The columns recorded mode reads from the store: JSON text, parsed on first use (a new
    batch per spec, so that each spec parses them itself)."""
    for spec in SPECS:
        expected = [run_check(spec, s).model_dump() for s in subjects]
        assert _rows(run_check_batch(spec, _stored(subjects)), len(subjects)) == expected, _label(
            spec
        )
