"""The runs table: filters, full-text search, facets, sorting and paging, all in SQL. The
filter's WHERE clause is built here, from the page's address; the page of runs, the facet
counts and bulk promotion's ids are read by ``store/runs.py`` (``runs_page_rows``,
``shared_facet_counts``, ``facet_value_counts``, ``scanned_facet_counts``,
``matching_run_ids``) with that clause."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from tracereplay.errors import BadParameterError
from tracereplay.store import runs as run_store
from tracereplay.store.db import Store

#: facet name -> the runs column it counts (``store/runs.py``'s ``RUN_FACETS``)
FACETS = run_store.RUN_FACETS
#: sort key -> SQL expression
SORTS: dict[str, str] = {
    "started": "started_at",
    "duration": "duration_ms",
    "tokens": "coalesce(input_tokens, 0) + coalesce(output_tokens, 0)",
    "tools": "tool_calls_count",
    "llm": "total_llm_calls",
    "agent": "agent_name",
    "status": "status",
}
#: facet values listed at most (the most frequent first)
FACET_LIMIT = 12
#: a text search is counted over its newest matches at most (``facet_counts``)
SEARCH_COUNTED = 10_000
_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


#: the kinds the runs page shows when the address names none: live runs, as ``tracereplay runs``
DEFAULT_KINDS = ("live",)
#: ``kind=all`` in the address: every kind (replays too)
ALL_KINDS = "all"


@dataclass(frozen=True)
class RunFilter:
    """What the runs page shows: filters (each facet a set of accepted values), search, order.

    Read from an address, the ``kind`` facet is ``DEFAULT_KINDS`` unless it names kinds;
    ``kind=all`` keeps every kind (``values`` then has no ``kind``)."""

    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    q: str = ""
    since: str = ""
    until: str = ""
    sort: str = "started"
    desc: bool = True
    page: int = 1
    size: int = 50

    @classmethod
    def from_query(cls, params: Any, default_size: int = 50, max_size: int = 500) -> RunFilter:
        """Read a filter from query parameters (a Starlette ``QueryParams`` or a mapping of
        lists); bad values are one-line ``BadParameterError``s."""
        values = {name: tuple(v for v in _getlist(params, name) if v) for name in FACETS}
        kinds = values["kind"]
        values["kind"] = () if ALL_KINDS in kinds else kinds or DEFAULT_KINDS
        sort = _get(params, "sort") or "started"
        if sort not in SORTS:
            raise BadParameterError(f"unknown sort '{sort}' (one of {', '.join(SORTS)})")
        order = _get(params, "order") or "desc"
        if order not in ("asc", "desc"):
            raise BadParameterError("order must be asc or desc")
        page = _int(_get(params, "page") or "1", "page")
        size = _int(_get(params, "size") or str(default_size), "size")
        if page < 1 or not 1 <= size <= max_size:
            raise BadParameterError(f"page must be 1 or more and size between 1 and {max_size}")
        flt = cls(
            values={k: v for k, v in values.items() if v},
            q=(_get(params, "q") or "").strip(),
            since=(_get(params, "since") or "").strip(),
            until=(_get(params, "until") or "").strip(),
            sort=sort,
            desc=order == "desc",
            page=page,
            size=size,
        )
        flt.where()  # validates the times
        return flt

    def query_items(self, **changes: Any) -> list[tuple[str, str]]:
        """The filter as query parameters (with ``changes`` applied), defaults left out."""
        flt = replace(self, **changes) if changes else self
        items: list[tuple[str, str]] = []
        for name in FACETS:
            chosen = flt.values.get(name, ())
            if name == "kind" and chosen in (DEFAULT_KINDS, ()):
                chosen = () if chosen else (ALL_KINDS,)
            items.extend((name, v) for v in chosen)
        for name in ("q", "since", "until"):
            if getattr(flt, name):
                items.append((name, getattr(flt, name)))
        if flt.sort != "started":
            items.append(("sort", flt.sort))
        if not flt.desc:
            items.append(("order", "asc"))
        if flt.page != 1:
            items.append(("page", str(flt.page)))
        if flt.size != 50:
            items.append(("size", str(flt.size)))
        return items

    def toggled(self, facet: str, value: str) -> RunFilter:
        """This filter with ``value`` of ``facet`` switched on or off (back to page 1)."""
        current = self.values.get(facet, ())
        new = tuple(v for v in current if v != value) if value in current else (*current, value)
        values = {**self.values, facet: new}
        return replace(self, values={k: v for k, v in values.items() if v}, page=1)

    @property
    def active(self) -> bool:
        """Anything chosen beyond the default (live runs, no search, any time)."""
        chosen = {k: v for k, v in self.values.items() if (k, v) != ("kind", DEFAULT_KINDS)}
        return bool(chosen or "kind" not in self.values or self.q or self.since or self.until)

    @property
    def live_only(self) -> bool:
        """Only the default kinds are shown (replays left out)."""
        return self.values.get("kind") == DEFAULT_KINDS

    def every_kind(self) -> RunFilter:
        """This filter with runs of every kind (back to page 1)."""
        values = {k: v for k, v in self.values.items() if k != "kind"}
        return replace(self, values=values, page=1)

    def counted(self) -> bool:
        """``where()`` names facet columns only (no search, time or label): the runs it keeps
        can be counted from ``run_counts`` instead of read one by one."""
        return not (self.q or self.since or self.until or self.values.get("label"))

    def where(self, skip: str | None = None) -> tuple[str, list[Any]]:
        """The WHERE clause (without the keyword) and its parameters; ``skip`` leaves one facet's
        own filter out (facet counts show what choosing another value would give)."""
        parts = [(c, p) for name, c, p in self.parts() if name != skip or name is None]
        return _joined(parts)

    def parts(self) -> list[tuple[str | None, str, list[Any]]]:
        """The WHERE clause's conditions: ``(facet, condition, parameters)`` for each facet
        with a filter, ``(None, ...)`` for the search and the time range."""
        out: list[tuple[str | None, str, list[Any]]] = []
        for name in FACETS:
            chosen = self.values.get(name)
            if not chosen:
                continue
            if name == "model":
                # the JSON text holds each name quoted: a cheap substring test first, then exact
                clause = (
                    "(" + " OR ".join(["contains(models, ?)"] * len(chosen)) + ")"
                    " AND list_has_any(CAST(models AS VARCHAR[]), CAST(? AS VARCHAR[]))"
                )
                params: list[Any] = [orjson.dumps(v).decode() for v in chosen]
            elif name == "label":
                # the runs whose latest label is chosen, by the (few) labels: not each run's
                # label looked up, which cost as much as the runs
                clause = (
                    "(run_id IN (SELECT run_id FROM latest_labels"
                    " WHERE list_contains(CAST(? AS VARCHAR[]), verdict))"
                    " OR (list_contains(CAST(? AS VARCHAR[]), 'unlabelled')"
                    " AND run_id NOT IN (SELECT run_id FROM latest_labels)))"
                )
                params = [list(chosen)]
            else:
                clause = f"list_contains(CAST(? AS VARCHAR[]), {FACETS[name]})"
                params = []
            out.append((name, clause, [*params, list(chosen)]))
        if self.q:
            needle = self.q.lower()
            out.append((
                None,
                "(contains(lower(query), ?) OR contains(lower(response), ?)"
                " OR contains(lower(error), ?))",
                [needle, needle, needle],
            ))  # fmt: skip
        if self.since:
            out.append((None, "started_at >= ?", [parse_time(self.since, "since")]))
        if self.until:
            out.append((None, "started_at < ?", [parse_time(self.until, "until", end=True)]))
        return out


def _joined(parts: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    """Conditions joined by AND (``TRUE`` for none), with their parameters in order."""
    return (" AND ".join(c for c, _ in parts) or "TRUE"), [v for _, p in parts for v in p]


def _get(params: Any, name: str) -> str | None:
    if hasattr(params, "get"):
        value = params.get(name)
        if isinstance(value, list):
            return value[-1] if value else None
        return value
    return None


def _getlist(params: Any, name: str) -> list[str]:
    if hasattr(params, "getlist"):
        return list(params.getlist(name))
    if isinstance(params, Mapping):
        value = params.get(name)
        if value is None:
            return []
        return list(value) if isinstance(value, (list, tuple)) else [value]
    return []


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise BadParameterError(f"{name} must be a whole number, not '{text}'") from None


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def parse_time(text: str, name: str, *, end: bool = False, now: datetime | None = None) -> datetime:
    """A time filter: ``24h`` / ``7d`` / ``30m`` / ``2w`` ago, a date (``2025-01-31``; as
    ``until`` the whole day is included) or an ISO date-time (UTC unless it says otherwise)."""
    now = now or datetime.now(UTC)
    match = _RELATIVE.match(text)
    if match:
        return now - timedelta(**{_UNITS[match.group(2).lower()]: int(match.group(1))})
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadParameterError(
            f"{name} '{text}' is not a time: give 24h, 7d, a date (2025-01-31) or an ISO date-time"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if end and len(text.strip()) == 10:  # a bare date: up to the end of that day
        value += timedelta(days=1)
    return value


@dataclass
class RunCounts:
    """The runs a filter keeps: ``total``, and each facet's ``(value, n)`` among the runs the
    other filters keep. ``newest``: a text search matched more runs than that, and these
    counts are of its ``newest`` newest matches (the first pages of the list)."""

    total: int
    facets: dict[str, list[tuple[str, int]]]
    newest: int | None = None


@dataclass
class RunsPage:
    rows: list[dict[str, Any]]
    counts: RunCounts


def runs_page(store: Store, flt: RunFilter) -> RunsPage:
    """One page of runs, the number matching, and the facet counts."""
    where, params = flt.where()
    order = SORTS[flt.sort] + (" DESC" if flt.desc else " ASC") + " NULLS LAST, run_id"
    rows = run_store.runs_page_rows(
        store, where, params, order, flt.size, (flt.page - 1) * flt.size
    )
    return RunsPage(rows=rows, counts=facet_counts(store, flt))


def facet_counts(store: Store, flt: RunFilter, newest: int = SEARCH_COUNTED) -> RunCounts:
    """The number of runs the filter keeps and, for each facet, its most frequent values among
    the runs the *other* filters keep. A filter of facet columns only (``RunFilter.counted``)
    is counted from ``run_counts``: the total and the facets without a filter of their own in
    one aggregate, each facet with a filter of its own in another. Any other filter (a search,
    a time range, a label) is counted in one pass over the runs it keeps; a text search over
    its ``newest`` newest matches at most. No index serves a search: counting every match
    read every run's text (seconds on PostgreSQL at a million runs), where the newest
    matches are found from the newest runs, as the page's rows are."""
    if flt.counted():
        shared = [n for n in FACETS if n not in flt.values]
        where, params = flt.where()
        rows = run_store.shared_facet_counts(store, where, params, shared)
        for name in FACETS:
            if name not in shared:
                own_where, own_params = flt.where(skip=name)
                rows += [
                    (name, v, n)
                    for v, n in run_store.facet_value_counts(store, name, own_where, own_params)
                ]
    else:
        parts = flt.parts()
        rest, rest_params = _joined([(c, p) for name, c, p in parts if name is None])
        own = [(name, c, p) for name, c, p in parts if name is not None]
        rows = run_store.scanned_facet_counts(
            store, rest, rest_params, own, newest=newest if flt.q else None
        )
    counts = RunCounts(total=0, facets={})
    for facet, value, n in rows:
        if facet == "total":
            counts.total = int(n)
        elif facet == "more":
            counts.newest = newest
        else:
            counts.facets.setdefault(facet, []).append((_label(value), int(n)))
    for name in FACETS:
        values = sorted(counts.facets.get(name, []), key=lambda v: (-v[1], v[0]))[:FACET_LIMIT]
        listed = {v for v, _ in values}
        # a chosen value stays listed even when nothing matches it now
        values.extend((v, 0) for v in flt.values.get(name, ()) if v not in listed)
        counts.facets[name] = values
    return counts


def _label(value: Any) -> str:
    return "" if value is None else str(value)


def matching_ids(store: Store, flt: RunFilter, limit: int) -> list[str]:
    """Ids of the recorded runs the filter keeps, oldest first, at most ``limit`` (bulk
    promotion)."""
    where, params = flt.where()
    return run_store.matching_run_ids(store, where, params, limit)
