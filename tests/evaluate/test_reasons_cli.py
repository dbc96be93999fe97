"""What ``eval`` says when a case fails, read as a user reads it: each check's whole reason on
lines of its own (wrapped at the terminal's width, never cut), the replay's reason said once,
naming the argument that changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from calculator_store import calc_cli as _cli
from calculator_store import calculator_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def calculator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return calculator_store(tmp_path_factory.mktemp("calculator"))


@pytest.mark.parametrize("columns", [80, 160])
def test_a_renamed_argument_is_one_reason_per_check_never_cut(
    calculator: Path, columns: int
) -> None:
    done = _cli(calculator, "-m", "tracereplay", "eval", "calc", "--agent", "calc:renamed",
                columns=columns)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "…" not in out.split("FAILED #", 1)[1], out  # no reason cut
    flat = " ".join(out.split())
    # the replay's reason names the change, once per case; the status check does not repeat it
    assert flat.count("no recording for tool call") == 2, out
    assert flat.count("a renamed x; b renamed y") == 4, out  # replay and toolCallArgsMatch
    assert "recorded call(s) never made" not in flat, out
    # each failing check starts a line of its own under its case
    starts = [line.strip().split(":")[0] for line in out.splitlines()]
    for check in ("replay", "status", "containsExpected", "toolCallArgsMatch"):
        assert starts.count(check) == 2, out
    assert "(see replay)" in flat


def test_the_same_agent_passes(calculator: Path) -> None:
    done = _cli(calculator, "-m", "tracereplay", "eval", "calc", "--agent", "calc:agent")
    assert done.returncode == 0, done.stdout + done.stderr
