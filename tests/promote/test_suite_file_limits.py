"""Suite files built to hurt: refused with one problem that names the line, never an internal
error, without building what they ask for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tracereplay.promote.suite_file import SuiteFileError, load_checks, load_suite
from tracereplay.promote.suite_guard import MAX_DEPTH

HEAD = "format: tracereplay-suite/1\nname: hostile\n"


def _laughs(levels: int = 9) -> str:
    lines = [HEAD, 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]\n")
    lines.append(f"cases:\n  - query: q\n    metadata: {{boom: *l{levels - 1}}}\n")
    return "".join(lines)


def _problem(text: str, fmt: str = "yaml") -> str:
    with pytest.raises(SuiteFileError) as err:
        load_suite(text, fmt, "hostile.suite")  # type: ignore[arg-type]
    assert len(err.value.problems) == 1
    return str(err.value)


def test_a_billion_laughs_is_refused_without_expanding_it() -> None:
    message = _problem(_laughs())
    assert message.startswith("hostile.suite:1: YAML aliases expand this file to")
    # the same inside a checks file
    with pytest.raises(SuiteFileError, match="YAML aliases expand"):
        load_checks(_laughs().replace("cases:", "checks:"), "yaml", "checks.yaml")


def test_a_few_aliases_are_fine() -> None:
    text = HEAD + "cases:\n  - {query: q, tags: &t [x, y]}\n  - {query: r, tags: *t}\n"
    assert len(load_suite(text, "yaml").cases) == 2


@pytest.mark.parametrize(
    "tagged",
    [
        '!!python/object/apply:os.system ["echo pwned"]',
        "!!python/name:os.system",
        "!custom thing",
    ],
)
def test_yaml_tags_beyond_plain_data_are_refused(tagged: str) -> None:
    message = _problem(HEAD + f"cases:\n  - query: {tagged}\n")
    assert message.startswith("hostile.suite:4: YAML tag")
    assert "not allowed" in message


def test_a_self_referencing_alias_is_refused() -> None:
    message = _problem(HEAD + "cases: &c [*c]\n")
    assert "hostile.suite:3" in message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 5000, 200_000])
def test_deep_nesting_is_refused_in_json_and_yaml(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    as_json = (
        '{"format": "tracereplay-suite/1", "name": "n",\n"cases": [{"query": "q",\n'
        f'"metadata": {{"m": {nested}}}}}]}}'
    )
    assert _problem(as_json, "json").startswith("hostile.suite:3: values are nested too deeply")
    as_yaml = HEAD + f"cases:\n  - query: q\n    metadata:\n      m: {nested}\n"
    message = _problem(as_yaml)
    assert message.startswith("hostile.suite:")
    assert "nested" in message or "not valid YAML" in message  # libyaml stops at 1000 itself


def test_block_yaml_nested_deeply_is_refused() -> None:
    body = "".join("  " * i + f"k{i}:\n" for i in range(200))
    message = _problem(HEAD + "cases:\n  - query: q\n    metadata:\n" + body)
    assert "nested" in message


def test_nesting_within_the_limit_is_kept() -> None:
    nested = "[" * 20 + "1" + "]" * 20
    parsed = load_suite(HEAD + f"cases:\n  - query: q\n    metadata: {{m: {nested}}}\n", "yaml")
    assert parsed.cases[0].case.metadata["m"]


def test_the_cli_refuses_a_hostile_file_with_one_line_and_exit_2(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs())
    result = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(tmp_path / "s.duckdb"), "suite", "import", str(bomb)],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {bomb}:1: YAML aliases expand")
