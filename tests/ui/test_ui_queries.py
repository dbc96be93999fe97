"""The runs filter: reading it from the address, time expressions, and its SQL against a store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from postgres_server import pg_server, pg_url, store_target  # noqa: F401 (fixtures)

from tracereplay.errors import BadParameterError
from tracereplay.store import Store
from tracereplay.ui.queries.runs import (
    RunCounts,
    RunFilter,
    facet_counts,
    parse_time,
    runs_page,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("24h", NOW - timedelta(hours=24)),
        ("7d", NOW - timedelta(days=7)),
        ("30m", NOW - timedelta(minutes=30)),
        ("2w", NOW - timedelta(weeks=2)),
        ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
        ("2026-03-01T10:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
        ("2026-03-01T10:00:00+02:00", datetime(2026, 3, 1, 8, tzinfo=UTC)),
        ("2026-03-01T10:00:00Z", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ],
)
def test_parse_time(text: str, expected: datetime) -> None:
    assert parse_time(text, "since", now=NOW) == expected


def test_until_a_date_includes_the_whole_day() -> None:
    assert parse_time("2026-03-01", "until", end=True) == datetime(2026, 3, 2, tzinfo=UTC)
    with pytest.raises(BadParameterError, match="is not a time"):
        parse_time("last tuesday", "since")


def test_filter_round_trips_through_the_address() -> None:
    flt = RunFilter.from_query(
        {"status": ["failed", "success"], "agent": ["a b"], "q": [" refund "], "sort": ["tokens"],
         "order": ["asc"], "page": ["3"], "since": ["7d"]}
    )  # fmt: skip
    # no kind in the address: live runs (as `tracereplay runs`)
    assert flt.values == {"status": ("failed", "success"), "agent": ("a b",), "kind": ("live",)}
    assert flt.q == "refund" and flt.sort == "tokens" and not flt.desc and flt.page == 3
    assert ("kind", "live") not in flt.query_items()

    def again(f: RunFilter) -> RunFilter:
        return RunFilter.from_query(
            {k: [v for key, v in f.query_items() if key == k] for k, _ in f.query_items()}
        )

    assert again(flt) == flt
    toggled = flt.toggled("status", "failed").toggled("kind", "replay")
    assert toggled.values == {"status": ("success",), "agent": ("a b",), "kind": ("live", "replay")}
    assert toggled.page == 1 and again(toggled) == toggled
    every = flt.every_kind()  # kind=all: no kind filter
    assert "kind" not in every.values and ("kind", "all") in every.query_items()
    assert again(every) == every and not every.live_only and flt.live_only
    assert flt.toggled("kind", "live").values.get("kind") is None  # unticking live: every kind


def test_search_text_is_literal(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        store.con.execute(
            "INSERT INTO runs (run_id, trace_id, root_span_id, kind, status, query, models,"
            " started_at) VALUES"
            " ('r1', 't1', 's1', 'live', 'success', 'refund 100% now', '[\"m-1\"]', now()),"
            " ('r2', 't2', 's2', 'live', 'failed', 'refund 1000 now', '[\"m-2\", \"m-1\"]', now()),"
            " ('r3', 't3', 's3', 'replay', 'failed', 'O''Brien?', '[\"m-\\\"q\"]', now())"
        )

        def total(**params: list[str]) -> int:
            return runs_page(store, RunFilter.from_query({"kind": ["all"], **params})).counts.total

        assert total(q=["100%"]) == 1 and total(q=["REFUND"]) == 2
        assert total(q=["o'brien"]) == 1 and total(q=["_"]) == 0
        assert total(model=["m-1"]) == 2 and total(model=["m-2"]) == 1
        assert total(model=['m-"q']) == 1 and total(model=["q"]) == 0
        counts = facet_counts(store, RunFilter.from_query({"status": ["failed"], "kind": ["all"]}))
        facets = counts.facets
        assert counts.total == 2 and counts.newest is None
        assert dict(facets["status"]) == {"success": 1, "failed": 2}  # ignores its own filter
        assert dict(facets["kind"]) == {"live": 1, "replay": 1}
        assert dict(facets["model"]) == {"m-2": 1, "m-1": 1, 'm-"q': 1}


@pytest.mark.parametrize(
    "address",
    [
        {},
        {"kind": ["all"]},
        {"status": ["failed"]},
        {"status": ["failed", "success"], "agent": ["a"], "kind": ["all"]},
        {"model": ["m-1"], "service": ["svc"]},
        {"label": ["bad"]},
        {"label": ["unlabelled"], "status": ["success"]},
        {"q": ["refund"], "agent": ["b"]},
        {"since": ["2026-03-02"], "model": ["m-2"]},
        {"q": ["hello"], "label": ["good", "unlabelled"], "status": ["success"]},
        {"kind": ["all"], "since": ["2026-03-02"], "label": ["bad", "good"], "model": ["m-1"]},
    ],
)
def test_counts_from_run_counts_are_the_counts_of_the_runs(
    store_target: str,  # noqa: F811
    address: dict[str, list[str]],
) -> None:
    """The runs list's counts, read from ``run_counts`` (a filter of facet columns only) or
    in one pass over the runs (a search, a time range, a label), are the counts of the runs
    themselves, on both engines: the total, and each facet's values among the runs that the
    other filters keep."""
    flt = RunFilter.from_query(address)
    counts = _counts_of_sixty_runs(store_target, flt)
    counted = {name: {v: n for v, n in values if n} for name, values in counts.facets.items()}
    assert (counts.total, counted, counts.newest) == (*_counted_by_hand(flt), None)
    assert counts.total > 0


@pytest.mark.parametrize(
    "address",
    [
        {"q": ["refund"]},
        {"q": ["refund"], "agent": ["b"], "kind": ["all"]},
        {"q": ["E"], "since": ["2026-03-02"], "label": ["good", "unlabelled"]},
        {"q": ["hello"], "status": ["failed"], "model": ["m-1"]},
    ],
)
@pytest.mark.parametrize("newest", [5, 12, 30, 60])
def test_a_search_is_counted_over_its_newest_matches(
    store_target: str,  # noqa: F811
    address: dict[str, list[str]],
    newest: int,
) -> None:
    """A text search is counted over its ``newest`` newest matches (the search's, before the
    facet filters, in the list's order) and says when more runs match; a search matching
    exactly that many, or fewer, is counted in full. The same on both engines."""
    flt = RunFilter.from_query(address)
    counts = _counts_of_sixty_runs(store_target, flt, newest)
    counted = {name: {v: n for v, n in values if n} for name, values in counts.facets.items()}
    total, by_hand = _counted_by_hand(flt, newest)
    more = _search_matches(flt) > newest
    assert (counts.total, counted) == (total, by_hand)
    assert counts.newest == (newest if more else None)


def _counts_of_sixty_runs(target: str, flt: RunFilter, *newest: int) -> RunCounts:
    """``facet_counts(flt)`` of 60 runs, an hour apart, of two agents, kinds, statuses, texts,
    model lists, some labelled (``_counted_by_hand`` lists the same runs)."""
    with Store.open(target) as store:
        with store.transaction():
            store.con.execute(
                "INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, service_name, kind,"
                " status, query, models, started_at)"
                " SELECT 'r' || i, 't' || i, 's', CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END,"
                " CASE WHEN i % 4 = 0 THEN 'svc' END,"
                " CASE WHEN i % 5 = 0 THEN 'replay' ELSE 'live' END,"
                " CASE WHEN i % 7 = 0 THEN 'failed' ELSE 'success' END,"
                " CASE WHEN i % 2 = 0 THEN 'refund please' ELSE 'hello' END,"
                ' CAST(CASE i % 3 WHEN 0 THEN \'["m-1"]\' WHEN 1 THEN \'["m-2", "m-1"]\''
                " ELSE '[]' END AS JSON),"
                " CAST('2026-03-01' AS TIMESTAMPTZ) + i * INTERVAL 1 HOUR FROM range(60) AS g(i)"
            )
            store.con.execute(
                "INSERT INTO labels (label_id, run_id, verdict, created_at) SELECT 'l' || i,"
                " 'r' || i, CASE WHEN i % 2 = 0 THEN 'bad' ELSE 'good' END, now()"
                " FROM range(0, 60, 9) AS g(i)"
            )
        with store.transaction(read_only=True):
            return facet_counts(store, flt, *newest)


def _sixty_runs() -> list[dict]:
    """The runs ``_counts_of_sixty_runs`` stores, oldest first."""
    runs = []
    for i in range(60):
        runs.append({
            "agent": "a" if i % 3 == 0 else "b", "service": "svc" if i % 4 == 0 else "",
            "kind": "replay" if i % 5 == 0 else "live",
            "status": "failed" if i % 7 == 0 else "success",
            "model": [["m-1"], ["m-2", "m-1"], []][i % 3],
            "label": ("bad" if i % 2 == 0 else "good") if i % 9 == 0 else "unlabelled",
            "text": "refund please" if i % 2 == 0 else "hello",
            "at": datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=i),
        })  # fmt: skip
    return runs


def _searched(flt: RunFilter, run: dict) -> bool:
    """The run is kept by the filter's search and time range (not its facets)."""
    if flt.q and flt.q.lower() not in run["text"]:
        return False
    return not (flt.since and run["at"] < parse_time(flt.since, "since"))


def _search_matches(flt: RunFilter) -> int:
    return sum(_searched(flt, run) for run in _sixty_runs())


def _counted_by_hand(
    flt: RunFilter, newest: int | None = None
) -> tuple[int, dict[str, dict[str, int]]]:
    """What ``facet_counts`` should say of the sixty runs, counted in Python: of the
    ``newest`` newest runs the search and time range keep, when given."""
    runs = [run for run in reversed(_sixty_runs()) if _searched(flt, run)][:newest]

    def keeps(run: dict, skip: str | None = None) -> bool:
        for name, chosen in flt.values.items():
            value = run[name]
            if name != skip and not set(value if isinstance(value, list) else [value]) & set(
                chosen
            ):
                return False
        return True

    counts: dict[str, dict[str, int]] = {}
    for name in ("status", "kind", "agent", "service", "model", "label"):
        counts[name] = {}
        for run in runs:
            if keeps(run, skip=name):
                for v in run[name] if name == "model" else [run[name]]:
                    counts[name][v] = counts[name].get(v, 0) + 1
    return sum(keeps(r) for r in runs), counts
