"""Suite-file YAML read by yaml-rs: what ``suite export`` writes reads back the same, real YAML
(not a subset) is read, and bad YAML is one line with its line number and a non-zero exit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promote_helpers import CliResult

from tracereplay.promote import yaml_load
from tracereplay.promote.suite_file import SuiteFileError, dump_data, load_suite

Cli = Callable[..., CliResult]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.sampled_from(
        ["yes", "No", "on", "null", "NULL", "~", "1e3", "0o17", "0x1F", "012", "1_000", "1:20",
         ".inf", "-.5", "+1", "-", "a: b", "# x", "x #y", "2026-01-01", "2026-01-01T10:00:00Z",
         "  lead", "trail  ", "multi\nline\n", "\n\nx\n\n", "'q'", '"dq"', "tab\there", "é ü",
         "a\u2028b", "a\x85b", "\ufeffbom", "[1]", "{a}", "*x", "&y", "!t", "|", ">", "---",
         "...", "%YAML", ""]
    )
)  # fmt: skip
keys = st.text(min_size=1, max_size=12) | st.sampled_from(["id", "seq", "query", "1", "true"])
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data)
def test_what_is_written_reads_back_the_same(value: object) -> None:
    text = dump_data(value)
    assert yaml_load.load(text) == value, text


def test_real_yaml_is_read_not_a_subset() -> None:
    text = (
        "defaults: &d {kind: regex, pattern: 'x+'}\n"
        "flow: [1, {a: [b, c]}, 'd e', \"f\\tg\"]\n"
        "folded: >\n  one\n  two\n\n  three\n"
        "plain: a long\n  plain line\n"
        'quoted: "multi\n  line"\n'
        "kept: |+\n  x\n\n"
        "again: *d\n"
        "? complex\n: key\n"
        "words: [yes, no, on, off]  # YAML 1.2: text\n"
        "when: 2026-12-01\n"
        "numbers: [0o17, 0x1F, 1e3, .inf, 12345678901234567890123]\n"
    )
    assert yaml_load.load(text) == {
        "defaults": {"kind": "regex", "pattern": "x+"},
        "flow": [1, {"a": ["b", "c"]}, "d e", "f\tg"],
        "folded": "one two\nthree\n",
        "plain": "a long plain line",
        "quoted": "multi line",
        "kept": "x\n\n",
        "again": {"kind": "regex", "pattern": "x+"},
        "complex": "key",
        "words": ["yes", "no", "on", "off"],
        "when": "2026-12-01",
        "numbers": [15, 31, 1000.0, float("inf"), 12345678901234567890123],
    }


def test_anchors_and_tags_still_go_through_the_guard() -> None:
    head = "format: tracereplay-suite/1\nname: s\n"
    kept = load_suite(
        head + "cases:\n  - {query: q, tags: &t [x]}\n  - {query: r, tags: *t}\n", "yaml"
    )
    assert [c.case.tags for c in kept.cases] == [["x"], ["x"]]
    with pytest.raises(SuiteFileError, match=r"^s\.yaml:4: YAML tag '!!python/name:os\.system'"):
        load_suite(head + "cases:\n  - query: !!python/name:os.system\n", "yaml", "s.yaml")
    with pytest.raises(
        SuiteFileError, match=r"^s\.yaml:4: not valid YAML: but found another document"
    ):
        load_suite(head + "cases: []\n---\nname: other\n", "yaml", "s.yaml")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            "name: s\ncases:\n  - query: a\n   seq: 1\n",
            4,
            "not valid YAML: did not find expected '-' indicator",
        ),
        ("name: s\ncases: [{query: a}\n", 3, "not valid YAML"),
        ("name: s\ncases:\n\t- query: a\n", 3, "not valid YAML"),
        ("name: s\nname: t\ncases: []\n", 2, "name: this key is given twice"),
        ("name: s\ncases:\n  - query: *nowhere\n", 3, "not valid YAML: found undefined alias"),
    ],
)
def test_bad_yaml_is_one_line_with_its_line_number(
    tmp_path: Path, cli: Cli, text: str, line: int, reason: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = cli("suite", "import", str(path))
    assert result.exit_code == 2, result.stderr
    [message] = result.stderr.strip().splitlines()
    assert message.startswith(f"error: {path}:{line}: "), message
    assert reason in message, message
    assert message.endswith("(nothing was changed)"), message


def test_a_reason_only_yaml_rs_gives_keeps_its_line() -> None:
    error = yaml_load.syntax_error(
        "YAML parse error at line 3, column 2\n  |\n3 |  c: 2\n  |  ^\nwhile parsing a block"
        " mapping, did not find expected key"
    )
    assert (error.line, error.reason) == (
        3,
        "while parsing a block mapping, did not find expected key",
    )
