"""``eval --shard I/N --eval-run ID``: N jobs, each its share of the cases, one eval run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from replay_fixtures import AGENTS, CITIES, cli, make_suite, rows

from tracereplay.errors import BadParameterError
from tracereplay.evaluate.sharing import parse_shard, shard_cases, shared_eval_run_id


@given(st.lists(st.integers(), max_size=60), st.integers(1, 12))
def test_the_shards_of_a_suite_are_disjoint_and_cover_it(cases: list[int], n: int) -> None:
    shares = [shard_cases(cases, i, n) for i in range(1, n + 1)]
    assert sorted(x for share in shares for x in share) == sorted(cases)
    assert sum(len(s) for s in shares) == len(cases)
    assert max(map(len, shares)) - min(map(len, shares)) <= 1


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2", "1/99999"])
def test_a_bad_shard_is_one_line(text: str) -> None:
    with pytest.raises(BadParameterError, match="--shard"):
        parse_shard(text)


def test_a_shard_needs_a_shared_id() -> None:
    with pytest.raises(BadParameterError, match="--eval-run"):
        shared_eval_run_id(None, (1, 2), None, "weather")
    by_label = shared_eval_run_id(None, (1, 2), "nightly-7", "weather")
    assert by_label == shared_eval_run_id(None, (2, 2), "nightly-7", "weather")
    with pytest.raises(BadParameterError, match="--eval-run"):
        shared_eval_run_id("no spaces allowed", None, None, "weather")


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(AGENTS)
    path = tmp_path / "store.duckdb"
    make_suite(path, CITIES[:5])
    return path


@pytest.mark.parametrize(
    "agent", [[], ["--agent", "replay_agents:weather"]], ids=["recorded", "replay"]
)
def test_two_shards_make_one_eval_run(db: Path, agent: list[str]) -> None:
    for i in (1, 2):
        done = cli(db, "eval", "weather", *agent, "--shard", f"{i}/2", "--eval-run", "ci-42")
        assert done.exit_code == 0, done.output
    [run] = rows(db, "SELECT * FROM eval_runs")
    assert (run["eval_run_id"], run["total_cases"], run["passed"]) == ("ci-42", 5, 5)
    assert run["status"] == "completed" and run["pass_rate"] == 1.0
    seqs = rows(db, "SELECT seq FROM case_results WHERE eval_run_id = 'ci-42' ORDER BY seq")
    assert [r["seq"] for r in seqs] == sorted({r["seq"] for r in seqs}) and len(seqs) == 5
    shown = cli(db, "report", "ci-42", "-o", str(db.parent / "r.html"))
    assert shown.exit_code == 0, shown.output


def test_an_eval_run_of_another_mode_is_not_joined(db: Path) -> None:
    assert cli(db, "eval", "weather", "--eval-run", "ci-1").exit_code == 0
    done = cli(db, "eval", "weather", "--agent", "replay_agents:weather", "--eval-run", "ci-1")
    assert done.exit_code == 2 and "another suite or mode" in done.output
