"""The fast suite-file YAML reader gives exactly what PyYAML gives, or hands the text back."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.promote import fast_yaml
from tracereplay.promote.suite_file import dump_data

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.sampled_from(
        ["yes", "No", "on", "null", "~", "1e3", "0x1F", "012", "1:20", ".inf", "-", "a: b",
         "# x", "x #y", "2026-01-01", "  lead", "trail  ", "multi\nline\n", "\n\nx\n\n", "'q'",
         '"dq"', "tab\there", "é ü", "a\u2028b", "[1]", "{a}", "*x", "&y", "!t", "|", ">", ""]
    )
)  # fmt: skip
keys = st.text(min_size=1, max_size=12) | st.sampled_from(["id", "seq", "query", "1", "true"])
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=25,
)


def _same(text: str) -> None:
    fast = fast_yaml.load(text)
    if fast is None:
        return  # handed back to PyYAML: always allowed
    assert fast == yaml.load(text, Loader=_Loader), text  # noqa: S506


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, data, min_size=1, max_size=5))
def test_what_tracereplay_writes_reads_back_the_same(value: dict) -> None:
    text = dump_data(value, "yaml")
    _same(text)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, data, min_size=1, max_size=4), st.sampled_from([None, 2, 4]))
def test_other_writers_layouts(value: dict, indent: int | None) -> None:
    kw = {"indent": indent} if indent else {}
    _same(yaml.safe_dump(value, default_flow_style=False, allow_unicode=True, **kw))
    _same(yaml.safe_dump(value, allow_unicode=False, width=20, **kw))


def test_a_suite_file_is_read_fast_and_the_same() -> None:
    text = (
        "format: tracereplay-suite/1\nname: weather\n# a comment\nchecks:\n- kind: regex\n"
        "  pattern: \\d+ degrees\ncases:\n- seq: 0\n  query: What's the weather?\n"
        "  expected_output: |\n    Sunny,\n\n    22 degrees\n  tags: [ ]\n"
        "  expected_tool_calls:\n  - name: get_weather\n    arguments:\n      city: Paris\n"
        "      days: 3\n  parameters: {}\n"
    ).replace("[ ]", "[]")
    assert fast_yaml.load(text) == yaml.safe_load(text)
    assert fast_yaml.load(text)["cases"][0]["expected_output"] == "Sunny,\n\n22 degrees\n"


def test_what_it_does_not_read_goes_back_to_pyyaml() -> None:
    for text in [
        "a: &x 1\nb: *x\n",  # anchors
        "a: !!str 1\n",  # tags
        "a: [1, 2]\n",  # flow
        "a: 1\na: 2\n",  # a key twice: PyYAML's pass reports it with its line
        "a: >\n  folded\n",
        "a: plain\n  continued\n",
        "a: 1 # comment\n",
        "a: 2026-01-01\n",  # a timestamp
        "--- \na: 1\n",
        "a:\n\tb: 1\n",
    ]:
        assert fast_yaml.load(text) is None, text
