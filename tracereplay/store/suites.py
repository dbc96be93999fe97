"""Reads and writes of ``eval_suites`` and ``eval_cases`` (the caller owns the transaction):
promotion writes suites and cases, evaluation reads them as models; the UI's pages read them
as rows (with ``case_history``'s latest statuses), their models built in ``ui/queries/``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import TypeAdapter

from tracereplay.errors import AmbiguousIdError, NotFoundError
from tracereplay.models import (
    CheckSpec,
    Document,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    EvalTurn,
)
from tracereplay.models.fast import M, build
from tracereplay.store.db import Store

if TYPE_CHECKING:
    import pyarrow as pa

#: a case's documents and expected calls as JSON text, each list in one pydantic-core call
#: (what ``to_dict`` per item, then orjson, gives)
_DOCUMENTS = TypeAdapter(list[Document])
_TOOL_CALLS = TypeAdapter(list[EvalExpectedToolCall])
_TURNS = TypeAdapter(list[EvalTurn])

SUITE_COLUMNS = (
    "suite_id", "name", "description", "agent_name", "checks", "required_parameters",
    "metadata", "created_at", "updated_at",
)  # fmt: skip
CASE_COLUMNS = (
    "case_id", "suite_id", "seq", "query", "context", "expected_output", "expected_tool_calls",
    "parameters", "checks", "promoted_at", "source_kind", "source_run_id", "tags", "metadata",
    "history", "turns",
)  # fmt: skip


def now() -> datetime:
    """The current time in UTC, at the microsecond precision the store keeps."""
    return datetime.now(UTC)


# ---------------------------------------------------------------------- suites
def find_suite(store: Store, name: str) -> EvalSuite | None:
    """The suite called ``name`` exactly, or None."""
    return _one_suite(store, "name = ?", name)


def find_suite_by_id(store: Store, suite_id: str) -> EvalSuite | None:
    """The suite with this exact id, or None."""
    return _one_suite(store, "suite_id = ?", suite_id.lower())


def get_suite(store: Store, ident: str) -> EvalSuite:
    """The suite named ``ident``, else the one whose id starts with it; clear errors otherwise."""
    suite = find_suite(store, ident)
    if suite is not None:
        return suite
    if len(ident.strip()) >= 4:
        rows = store.con.execute(
            "SELECT suite_id FROM eval_suites WHERE starts_with(suite_id, ?) LIMIT 3",
            [ident.strip().lower()],
        ).fetchall()
        if len(rows) == 1:
            found = find_suite_by_id(store, rows[0][0])
            if found is not None:
                return found
        if len(rows) > 1:
            raise AmbiguousIdError(f"suite id '{ident}' is ambiguous: give more of it or the name")
    names = [
        r[0] for r in store.con.execute("SELECT name FROM eval_suites ORDER BY name").fetchall()
    ]
    known = (
        f" (suites: {', '.join(names[:10])}{', ...' if len(names) > 10 else ''})"
        if names
        else " (there are no suites yet)"
    )
    raise NotFoundError(f"no suite named '{ident}'{known}")


def list_suites(store: Store) -> list[tuple[EvalSuite, int]]:
    """Every suite by name, with its number of cases."""
    cols = ", ".join(f"s.{c}" for c in SUITE_COLUMNS)
    rows = store.con.execute(
        f"SELECT {cols}, (SELECT count(*) FROM eval_cases c WHERE c.suite_id = s.suite_id)"
        " FROM eval_suites s ORDER BY s.name"
    ).fetchall()
    return [(_suite(row[:-1]), int(row[-1])) for row in rows]


def insert_suite(store: Store, suite: EvalSuite) -> None:
    store.insert_row("eval_suites", SUITE_COLUMNS, _suite_values(suite))


def update_suite(store: Store, suite: EvalSuite) -> None:
    """Write every field of ``suite`` over the stored suite with the same id."""
    store.update_row("eval_suites", SUITE_COLUMNS, _suite_values(suite))


def touch_suite(store: Store, suite_id: str, when: datetime | None = None) -> None:
    """Record that the suite (or one of its cases) changed."""
    store.con.execute(
        "UPDATE eval_suites SET updated_at = ? WHERE suite_id = ?", [when or now(), suite_id]
    )


def delete_suite(store: Store, suite_id: str) -> int:
    """Remove a suite and its cases; returns how many cases went with it."""
    removed = store.con.execute(
        "SELECT count(*) FROM eval_cases WHERE suite_id = ?", [suite_id]
    ).fetchall()[0][0]
    store.con.execute("DELETE FROM eval_cases WHERE suite_id = ?", [suite_id])
    store.con.execute("DELETE FROM eval_suites WHERE suite_id = ?", [suite_id])
    return int(removed)


# ---------------------------------------------------------------------- cases
def list_cases(store: Store, suite_id: str) -> list[EvalCase]:
    """The suite's cases in ``seq`` order."""
    return _cases(store, "suite_id = ? ORDER BY seq", [suite_id])


def get_cases(store: Store, case_ids: Iterable[str]) -> list[EvalCase]:
    """The cases with these exact ids (unknown ids are left out), in ``seq`` order."""
    ids = list(set(case_ids))
    if not ids:
        return []
    return _cases(store, "case_id IN (SELECT unnest(?)) ORDER BY suite_id, seq", [ids])


def get_case(store: Store, ident: str) -> EvalCase:
    """The case whose id starts with ``ident``; NotFound / Ambiguous errors otherwise."""
    prefix = ident.strip().lower()
    if not prefix:
        raise NotFoundError("an empty case id matches nothing")
    found = _cases(store, "starts_with(case_id, ?) ORDER BY case_id LIMIT 6", [prefix])
    if len(found) > 1:
        listed = ", ".join(c.id for c in found[:5])
        raise AmbiguousIdError(f"case id '{ident}' is ambiguous: it starts {listed}...")
    if not found:
        raise NotFoundError(f"no case id starts with '{ident}'")
    return found[0]


def cases_by_source(store: Store, suite_id: str, run_ids: Iterable[str]) -> dict[str, EvalCase]:
    """The suite's cases promoted from any of ``run_ids``, by source run id."""
    ids = list(set(run_ids))
    if not ids:
        return {}
    found = _cases(store, "suite_id = ? AND source_run_id IN (SELECT unnest(?))", [suite_id, ids])
    return {c.source_run_id: c for c in found if c.source_run_id}


def next_seq(store: Store, suite_id: str) -> int:
    """The ``seq`` the suite's next case gets: one past the highest (0 for an empty suite).

    Inside a transaction the suite stays locked until it ends (``Store.lock``), so two writers
    promoting into one suite at once number their cases one after the other."""
    store.lock([f"suite:{suite_id}"])
    rows = store.con.execute(
        "SELECT max(seq) FROM eval_cases WHERE suite_id = ?", [suite_id]
    ).fetchall()
    return 0 if rows[0][0] is None else int(rows[0][0]) + 1


def insert_cases(store: Store, cases: Sequence[EvalCase]) -> None:
    """Insert cases in one statement, column by column (``insert_columns``: no Arrow)."""
    if not cases:
        return
    columns: dict[str, list[Any]] = {
        "case_id": [c.id for c in cases],
        "suite_id": [c.suite_id for c in cases],
        "seq": [c.seq for c in cases],
        "query": [c.query for c in cases],
        # "[]" is what dumping an empty list gives: most cases have no context documents
        "context": [_DOCUMENTS.dump_json(c.context).decode() if c.context else "[]" for c in cases],
        "expected_output": [c.expected_output for c in cases],
        "expected_tool_calls": [
            _TOOL_CALLS.dump_json(c.expected_tool_calls).decode() for c in cases
        ],
        "parameters": [None if c.parameters is None else _json(c.parameters) for c in cases],
        "checks": [None if c.checks is None else _json(_checks_json(c.checks)) for c in cases],
        "promoted_at": [_utc(c.promoted_at) for c in cases],
        "source_kind": [c.source_kind for c in cases],
        "source_run_id": [c.source_run_id for c in cases],
        "tags": [_json(c.tags) for c in cases],
        "metadata": [_json(c.metadata) for c in cases],
        "history": [_json(c.history) if c.history else None for c in cases],
        "turns": [_TURNS.dump_json(c.turns).decode() if c.turns else None for c in cases],
    }
    store.insert_columns("eval_cases", {name: columns[name] for name in CASE_COLUMNS})


def suite_has_turns(store: Store, suite_id: str) -> bool:
    """Whether any case of the suite is a multi-turn case (``turns``)."""
    return bool(
        store.con.execute(
            "SELECT 1 FROM eval_cases WHERE suite_id = ? AND turns IS NOT NULL LIMIT 1",
            [suite_id],
        ).fetchall()
    )


def turn_questions(store: Store, case_ids: Iterable[str]) -> dict[str, list[str]]:
    """The turns' questions of each multi-turn case among ``case_ids``, in order."""
    ids = list(case_ids)
    if not ids:
        return {}
    rows = store.con.execute(
        "SELECT case_id, turns FROM eval_cases WHERE case_id IN (SELECT unnest(?))"
        " AND turns IS NOT NULL",
        [ids],
    ).fetchall()
    return {case_id: [t["query"] for t in orjson.loads(turns)] for case_id, turns in rows}


def case_queries(store: Store, case_ids: Iterable[str]) -> dict[str, str]:
    """The query of each case among ``case_ids``, by case id (unknown ids are left out)."""
    return dict(
        store.con.execute(
            "SELECT case_id, query FROM eval_cases WHERE case_id IN (SELECT unnest(?))",
            [list(case_ids)],
        ).fetchall()
    )


def cases_with_sources(store: Store, suite_id: str) -> pa.Table:
    """The suite's cases joined with their source runs as one Arrow table, in no order:
    ``case_id, seq, expected_output, expected_tool_calls, checks, source_run_id, run_id,
    result, query`` (``run_id``/``result`` null when the source run is gone): what recorded
    mode scores a whole suite from, in one query."""
    return store.con.sql(
        "SELECT c.case_id, c.seq, c.expected_output, c.expected_tool_calls, c.checks,"
        " c.source_run_id, r.run_id, r.result, c.query"
        " FROM eval_cases c LEFT JOIN runs r ON r.run_id = c.source_run_id"
        " WHERE c.suite_id = ?",
        params=[suite_id],
    ).to_arrow_table()


def case_check_lists(store: Store, suite_id: str) -> list[str]:
    """The distinct check lists (JSON text) of the suite's cases that override its checks."""
    rows = store.con.execute(
        "SELECT DISTINCT CAST(checks AS VARCHAR) FROM eval_cases"
        " WHERE suite_id = ? AND checks IS NOT NULL",
        [suite_id],
    ).fetchall()
    return [r[0] for r in rows]


def suites_of_other_cases(store: Store, case_ids: Sequence[str], suite_id: str) -> dict[str, str]:
    """The name of the suite of each case among ``case_ids`` that belongs to a suite other
    than ``suite_id``, by case id (an imported file's ids that clash)."""
    return dict(
        store.con.execute(
            "SELECT c.case_id, s.name FROM eval_cases c JOIN eval_suites s USING (suite_id)"
            " WHERE c.case_id IN (SELECT unnest(?)) AND c.suite_id <> ?",
            [list(case_ids), suite_id],
        ).fetchall()
    )


def other_suites_have_cases(store: Store, suite_id: str) -> bool:
    """Whether any suite but ``suite_id`` has cases."""
    rows = store.con.execute(
        "SELECT EXISTS (SELECT 1 FROM eval_cases WHERE suite_id <> ?)", [suite_id]
    ).fetchall()
    return bool(rows[0][0])


def delete_cases(store: Store, case_ids: Iterable[str]) -> None:
    ids = list(set(case_ids))
    if ids:
        store.con.execute("DELETE FROM eval_cases WHERE case_id IN (SELECT unnest(?))", [ids])


# ---------------------------------------------------------------------- row <-> model
def _one_suite(store: Store, where: str, value: str) -> EvalSuite | None:
    rows = store.con.execute(
        f"SELECT {', '.join(SUITE_COLUMNS)} FROM eval_suites WHERE {where}", [value]
    ).fetchall()
    return _suite(rows[0]) if rows else None


def _suite(row: Sequence[Any]) -> EvalSuite:
    d = dict(zip(SUITE_COLUMNS, row))
    return EvalSuite(
        id=d["suite_id"],
        name=d["name"],
        description=d["description"] or "",
        agent_name=d["agent_name"] or "",
        checks=[CheckSpec.model_validate(c) for c in orjson.loads(d["checks"])],
        required_parameters=orjson.loads(d["required_parameters"]),
        metadata=orjson.loads(d["metadata"]),
        created_at=_utc(d["created_at"]),
        updated_at=_utc(d["updated_at"]),
    )


def _suite_values(suite: EvalSuite) -> list[Any]:
    return [
        suite.id,
        suite.name,
        suite.description,
        suite.agent_name,
        _json(_checks_json(suite.checks)),
        _json(suite.required_parameters),
        _json(suite.metadata),
        _utc(suite.created_at),
        _utc(suite.updated_at),
    ]


def _cases(store: Store, where: str, params: list[Any]) -> list[EvalCase]:
    rows = store.con.execute(
        f"SELECT {', '.join(CASE_COLUMNS)} FROM eval_cases WHERE {where}", params
    ).fetchall()
    return [_case(row) for row in rows]


def _case(row: Sequence[Any]) -> EvalCase:
    """A stored case, built without validating again what was validated when it was written
    (``fast.build``: a 10,000-case suite read in a third of the time); a document or expected
    call of another shape than the one written is validated."""
    d = dict(zip(CASE_COLUMNS, row))
    checks = None if d["checks"] is None else orjson.loads(d["checks"])
    return build(
        EvalCase,
        {
            "id": d["case_id"],
            "suite_id": d["suite_id"],
            "seq": d["seq"],
            "query": d["query"],
            "history": orjson.loads(d["history"]) if d["history"] else [],
            "turns": _TURNS.validate_json(d["turns"]) if d["turns"] else [],
            "context": [_stored(Document, x) for x in orjson.loads(d["context"])],
            "expected_output": d["expected_output"],
            "expected_tool_calls": [
                _stored(EvalExpectedToolCall, x) for x in orjson.loads(d["expected_tool_calls"])
            ],
            "parameters": None if d["parameters"] is None else orjson.loads(d["parameters"]),
            "promoted_at": _utc(d["promoted_at"]),
            "source_kind": d["source_kind"],
            "source_run_id": d["source_run_id"],
            "checks": None if checks is None else [CheckSpec.model_validate(c) for c in checks],
            "tags": orjson.loads(d["tags"]),
            "metadata": orjson.loads(d["metadata"]),
        },
    )


_FIELDS = {cls: frozenset(cls.model_fields) for cls in (Document, EvalExpectedToolCall)}


def _stored(cls: type[M], data: dict[str, Any]) -> M:
    """``data`` as written (every field of ``cls``, nothing else) built as it is, else
    validated."""
    if data.keys() == _FIELDS[cls]:
        return build(cls, data)
    return cls.model_validate(data)


def _checks_json(checks: Sequence[CheckSpec]) -> list[dict[str, Any]]:
    return [check_to_dict(c) for c in checks]


def check_to_dict(check: CheckSpec) -> dict[str, Any]:
    """A check as stored and exported: ``kind``, ``name`` when set, then its options."""
    data = check.model_dump(mode="json")
    if data.get("name") is None:
        data.pop("name", None)
    return data


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def suite_overview(store: Store) -> list[dict[str, Any]]:
    """Every suite (by name) with its case count and its latest eval run (id, pass rate,
    score, start) and every eval run's pass rate, oldest first: the UI's suites page."""
    return store.query_dicts(
        """
        WITH last AS (
            SELECT suite_id, count(*) AS eval_runs,
                   arg_max(eval_run_id, started_at) AS last_eval_run_id,
                   arg_max(pass_rate, started_at) AS last_pass_rate,
                   arg_max(aggregate_score, started_at) AS last_score,
                   max(started_at) AS last_started_at,
                   list(pass_rate ORDER BY started_at) AS pass_rates
            FROM suite_trend GROUP BY suite_id
        ), counts AS (
            SELECT suite_id, count(*) AS cases FROM eval_cases GROUP BY suite_id
        )
        SELECT s.suite_id, s.name, s.agent_name, s.description, s.updated_at,
               coalesce(c.cases, 0) AS cases, coalesce(l.eval_runs, 0) AS eval_runs,
               l.last_eval_run_id, l.last_pass_rate, l.last_score, l.last_started_at,
               l.pass_rates
        FROM eval_suites s LEFT JOIN last l USING (suite_id) LEFT JOIN counts c USING (suite_id)
        ORDER BY s.name
        """
    )


def suite_names(store: Store) -> list[str]:
    """Every suite's name, sorted (the UI's suite pickers)."""
    return [
        r[0] for r in store.con.execute("SELECT name FROM eval_suites ORDER BY name").fetchall()
    ]


def suite_row(store: Store, name: str) -> dict[str, Any] | None:
    """The ``eval_suites`` row of the suite called ``name`` as stored (JSON columns as text),
    or None: the UI's suite page."""
    rows = store.query_dicts("SELECT * FROM eval_suites WHERE name = ?", [name])
    return rows[0] if rows else None


def case_overview(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """The suite's cases by seq (query cut to 160 characters, what each expects, whether it has
    checks of its own) with each one's status and score in its latest eval run: the UI's
    suite page."""
    return store.query_dicts(
        """
        WITH latest AS (
            SELECT case_id, arg_max(status, started_at) AS last_status,
                   arg_max(score, started_at) AS last_score
            FROM case_history WHERE suite_id = ? GROUP BY case_id
        )
        SELECT c.case_id, c.seq, left(c.query, 160) AS query, c.source_kind, c.source_run_id,
               c.tags, c.expected_output IS NOT NULL AS has_expected,
               json_array_length(c.expected_tool_calls) AS expected_tools,
               c.checks IS NOT NULL AS own_checks, l.last_status, l.last_score
        FROM eval_cases c LEFT JOIN latest l USING (case_id)
        WHERE c.suite_id = ? ORDER BY c.seq
        """,
        [suite_id, suite_id],
    )


def case_row(store: Store, case_id: str) -> dict[str, Any] | None:
    """The ``eval_cases`` row of ``case_id`` as stored, with its suite's name as
    ``suite_name``, or None: the UI's case page."""
    rows = store.query_dicts(
        "SELECT c.*, s.name AS suite_name FROM eval_cases c JOIN eval_suites s USING (suite_id)"
        " WHERE c.case_id = ?",
        [case_id],
    )
    return rows[0] if rows else None


def case_queries_by_seq(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """The suite's cases by seq: id, seq, query cut to 80 characters (the rows of the UI's
    case x eval-run grid)."""
    return store.query_dicts(
        "SELECT case_id, seq, left(query, 80) AS query FROM eval_cases WHERE suite_id = ?"
        " ORDER BY seq",
        [suite_id],
    )


def suite_checks_text(store: Store, suite_id: str) -> str | None:
    """The suite's ``checks`` as stored (JSON text): the UI's case editor shows them next to
    the case's own."""
    return store.con.execute(
        "SELECT checks FROM eval_suites WHERE suite_id = ?", [suite_id]
    ).fetchall()[0][0]


def cases_from_run(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The cases promoted from run ``run_id`` (id, seq, source kind, promotion time, suite
    name), by suite and seq: the run page."""
    return store.query_dicts(
        "SELECT c.case_id, c.seq, c.source_kind, c.promoted_at, s.name AS suite_name"
        " FROM eval_cases c JOIN eval_suites s USING (suite_id)"
        " WHERE c.source_run_id = ? ORDER BY s.name, c.seq",
        [run_id],
    )


def case_link(store: Store, case_id: str) -> dict[str, Any] | None:
    """A case's id, seq, source run and suite name, or None: the run page of a replay links
    the case it replayed."""
    found = store.query_dicts(
        "SELECT c.case_id, c.seq, c.source_run_id, s.name AS suite_name FROM eval_cases c"
        " JOIN eval_suites s USING (suite_id) WHERE c.case_id = ?",
        [case_id],
    )
    return found[0] if found else None
