"""Importing a suite file into the store: plan every change, check it, then apply it at once.

The rule: after an import the stored suite is what the file says. The file's suite is matched
to a stored one by ``id`` when the file gives one, else by ``name``. Its cases are matched to
stored cases by ``id``; a case the file gives without an id is matched by ``source_run_id``,
then by ``seq``, then by identical ``query``, and keeps the stored id. Stored cases the file no
longer has are removed. ``updated_at`` becomes the import time when anything changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracereplay.models import EvalCase, EvalSuite, Run
from tracereplay.promote.suite_file import ParsedCase, ParsedSuite, Problem, SuiteFileError
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store
from tracereplay.store.runs import run_kinds


@dataclass
class ImportPlan:
    """What importing a file changes: the suite to write and the case changes."""

    suite: EvalSuite
    suite_created: bool
    suite_changed: bool
    added: list[EvalCase] = field(default_factory=list)
    updated: list[EvalCase] = field(default_factory=list)
    removed: list[EvalCase] = field(default_factory=list)
    unchanged: list[EvalCase] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return (
            self.suite_created
            or self.suite_changed
            or bool(self.added or self.updated or self.removed)
        )

    def summary(self) -> str:
        """One line: what the import did (or would do)."""
        name = self.suite.name
        if self.suite_created:
            return f"suite '{name}' created with {len(self.added)} cases"
        if not self.changed:
            return f"suite '{name}' unchanged ({len(self.unchanged)} cases)"
        parts = [
            f"{len(self.added)} added",
            f"{len(self.updated)} updated",
            f"{len(self.removed)} removed",
            f"{len(self.unchanged)} unchanged",
        ]
        fields = " and its fields" if self.suite_changed else ""
        return f"suite '{name}'{fields} updated: {', '.join(parts)} cases"


def plan_import(store: Store, parsed: ParsedSuite, source: str) -> ImportPlan:
    """Match the file against the store; ``SuiteFileError`` for conflicts (nothing is written)."""
    problems: list[Problem] = []
    file_suite = parsed.suite
    stored = suite_store.find_suite_by_id(store, file_suite.id) if parsed.id_given else None
    by_name = suite_store.find_suite(store, file_suite.name)
    if stored is None and not parsed.id_given:
        stored = by_name
    if by_name is not None and stored is not None and by_name.id != stored.id:
        problems.append(
            _at(
                parsed,
                ("name",),
                f"another suite (id {by_name.id}) is already named '{file_suite.name}'",
            )
        )
    elif by_name is not None and stored is None:
        problems.append(
            _at(
                parsed,
                ("id",),
                f"suite '{file_suite.name}' exists with id {by_name.id}, not this id",
            )
        )
    suite_id = stored.id if stored is not None else file_suite.id
    stored_cases = suite_store.list_cases(store, suite_id) if stored is not None else []
    _check_case_ids(store, parsed, suite_id, problems)
    if problems:
        raise SuiteFileError(source, problems)

    cases = _match_cases(parsed.cases, stored_cases, suite_id)
    when = suite_store.now()
    suite = file_suite.model_copy(update={"id": suite_id})
    if stored is None:
        suite.created_at = suite.created_at if parsed.created_at_given else when
        suite.updated_at = suite.updated_at if parsed.updated_at_given else when
        return ImportPlan(suite=suite, suite_created=True, suite_changed=True, added=cases)
    if not parsed.created_at_given:
        suite.created_at = stored.created_at
    suite.updated_at = stored.updated_at
    plan = ImportPlan(suite=suite, suite_created=False, suite_changed=suite != stored)
    stored_by_id = {c.id: c for c in stored_cases}
    file_ids = {c.id for c in cases}
    for case in cases:
        old = stored_by_id.get(case.id)
        if old is None:
            plan.added.append(case)
        elif old != case:
            plan.updated.append(case)
        else:
            plan.unchanged.append(case)
    plan.removed = [c for c in stored_cases if c.id not in file_ids]
    if plan.changed:
        suite.updated_at = when
    return plan


def apply_import(store: Store, plan: ImportPlan) -> None:
    """Write the plan in one transaction."""
    if not plan.changed:
        return
    with store.transaction():
        if plan.suite_created:
            suite_store.insert_suite(store, plan.suite)
        else:
            suite_store.update_suite(store, plan.suite)
        suite_store.delete_cases(store, [c.id for c in plan.removed + plan.updated])
        suite_store.insert_cases(store, plan.added + plan.updated)


def import_suite(
    store: Store, parsed: ParsedSuite, source: str, *, dry_run: bool = False
) -> ImportPlan:
    """Plan, and unless ``dry_run`` apply, the import of a parsed suite file."""
    plan = plan_import(store, parsed, source)
    if not dry_run:
        apply_import(store, plan)
    return plan


def _at(parsed: ParsedSuite, path: tuple[int | str, ...], message: str) -> Problem:
    return Problem(path, message, parsed.locate(path))


def _check_case_ids(
    store: Store, parsed: ParsedSuite, suite_id: str, problems: list[Problem]
) -> None:
    """A case id the file gives must not belong to a case of another suite."""
    ids = [p.case.id for p in parsed.cases if p.id_given]
    if not ids or not _cases_elsewhere(store, suite_id):
        return
    elsewhere = suite_store.suites_of_other_cases(store, ids, suite_id)
    for p in parsed.cases:
        if p.id_given and p.case.id in elsewhere:
            problems.append(
                _at(parsed, (*p.path, "id"), f"belongs to a case of suite '{elsewhere[p.case.id]}'")
            )


def _cases_elsewhere(store: Store, suite_id: str) -> bool:
    """Whether the store holds cases of another suite: when not (a new store, or a store of
    this suite only), no id can clash and the file's ids are not sent to the store."""
    return suite_store.other_suites_have_cases(store, suite_id)


def _match_cases(parsed: list[ParsedCase], stored: list[EvalCase], suite_id: str) -> list[EvalCase]:
    """The file's cases with the stored ids (and seqs) of the cases they stand for."""
    taken = {p.case.id for p in parsed if p.id_given}
    free = [c for c in stored if c.id not in taken]
    stored_by_id = {c.id: c for c in stored}
    used = {p.case.seq for p in parsed if p.seq_given}
    # copies with the changes (model_copy): an assignment would validate the whole case again
    out: list[EvalCase] = []
    unnumbered: list[int] = []
    for p in parsed:
        update: dict[str, object] = {"suite_id": suite_id}
        if p.id_given:
            match = stored_by_id.get(p.case.id)
        else:
            match = _find(free, p, p.case)
            if match is not None:
                free.remove(match)
                update["id"] = match.id
        if not p.seq_given:
            if match is not None and match.seq not in used:
                update["seq"] = match.seq
                used.add(match.seq)
            else:
                unnumbered.append(len(out))
        same = update == {"suite_id": p.case.suite_id}  # a new suite's cases: nothing to change
        out.append(p.case if same else p.case.model_copy(update=update))
    next_seq = max(used, default=-1) + 1
    for index in unnumbered:  # cases without a seq follow the highest one, in file order
        out[index] = out[index].model_copy(update={"seq": next_seq})
        next_seq += 1
    return out


def _find(free: list[EvalCase], p: ParsedCase, case: EvalCase) -> EvalCase | None:
    if case.source_run_id:
        for c in free:
            if c.source_run_id == case.source_run_id:
                return c
    if p.seq_given:
        for c in free:
            if c.seq == case.seq:
                return c
    for c in free:
        if c.query == case.query:
            return c
    return None


# ---------------------------------------------------------------------- other tools' files
@dataclass
class FileImport:
    """What a file given to ``suite import`` holds: a suite (tracereplay's or another tool's,
    converted) or, for a list of ffai AgentResults, runs."""

    parsed: ParsedSuite | None = None
    runs: list[Run] = field(default_factory=list)
    format: str = "tracereplay"
    notes: list[str] = field(default_factory=list)


def read_import_file(
    text: str,
    source: str,
    *,
    name: str | None = None,
    metric_text: str | None = None,
    metric_source: str = "<metric>",
) -> FileImport:
    """Read a file for ``suite import``: a tracereplay suite file, an AgenticAssure suite, a
    testing-api TestSet (``metric_text``: its MetricConfiguration), a JSON list of Tracon
    EvalCases or of ffai AgentResults. ``SuiteFileError`` lists every problem (nothing changed)."""
    from tracereplay.promote import foreign
    from tracereplay.promote.suite_file import detect_format, load_suite

    fmt = detect_format(source, text)
    kind = None
    data, locate = None, None
    if foreign.might_be_foreign(text):
        data, locate = foreign.parse_file(text, fmt, source)
        kind = foreign.detect(data)
    if kind is None:
        if metric_text is not None:
            raise SuiteFileError(source, [Problem((), "--metric applies to a testing-api TestSet")])
        if name is not None:
            raise SuiteFileError(
                source,
                [Problem((), "--name applies to another tool's file (this is a suite file)")],
            )
        return FileImport(parsed=load_suite(text, fmt, source))
    metric = None
    if metric_text is not None:
        if kind != "testing-api":
            raise SuiteFileError(source, [Problem((), "--metric applies to a testing-api TestSet")])
        metric, _ = foreign.parse_file(
            metric_text, detect_format(metric_source, metric_text), metric_source
        )
    assert locate is not None
    out = foreign.load_foreign(
        kind, data, source, locate, name=name, metric=metric, metric_source=metric_source
    )
    if isinstance(out, foreign.ImportedRuns):
        return FileImport(runs=out.runs, format=kind, notes=out.notes)
    out.parsed.data = data
    return FileImport(parsed=out.parsed, format=kind, notes=out.notes)


def import_runs(store: Store, runs: list[Run], *, dry_run: bool = False) -> str:
    """Store imported runs (those imported before from the same items are replaced); the line
    saying what was (or would be) done."""
    ids = [r.run_id for r in runs]
    rows = run_kinds(store, ids)
    clash = [rid for rid, kind in rows if kind != "imported"]
    if clash:
        raise SuiteFileError(
            "runs", [Problem((), f"run {clash[0]} exists and was not imported: not replaced")]
        )
    if not dry_run:
        with store.transaction():
            store.replace_runs([r.trace_id for r in runs], runs)
    again = len(rows)
    verb = "would import" if dry_run else "imported"
    return (
        f"{verb} {len(runs)} runs of kind imported ({again} replacing earlier imports); "
        "promote them with `tracereplay promote RUN_ID --suite NAME`"
    )
