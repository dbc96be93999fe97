"""The pytest plugin: a suite's cases as test items (``pytest --tracereplay SUITE``).

Registered through the ``pytest11`` entry point, so installing tracereplay is enough; it does
nothing unless a suite is named (``--tracereplay SUITE`` or ``tracereplay_suite`` in the ini
file). Each case of the suite becomes one item, ``tracereplay:<suite>::case<seq>[<query words>]``, with the
case's tags and id as keywords, so ``-k`` selects by seq, tag or query text. The cases are
evaluated the way ``tracereplay eval`` evaluates them (recorded mode, or replay with
``--tracereplay-agent``) and stored as one eval run, so ``diff``, ``report`` and the UI see it:

- in one process, the selected items of a suite are evaluated together when the first of them
  runs (agent processes, concurrency, ``-x`` as ``--fail-fast``), and each item then reports
  its case's verdict;
- under pytest-xdist every worker evaluates each item it is given on its own, in its own
  process (``--in-process``: the worker is the isolation), into the eval run the controller
  named for the session (``evaluation.open_eval_run`` joins it), whose counts are summed from
  everything stored.

A case that is not PASSED fails with its verdict, reason, checks and drift as the message. For
cases inside your own test functions, ``suite_cases`` parametrizes a test and the
``tracereplay_eval`` fixture evaluates one case. Imports of the evaluator happen only once a
suite is named: the plugin costs every other pytest run nothing.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tracereplay.evaluate.settings import EvalSettings
    from tracereplay.models import EvalCase
    from tracereplay.scoring.outcomes import CaseReport

__all__ = ["CaseItem", "CaseNotPassed", "suite_cases"]

_WORKER_KEY = "tracereplay_eval_run"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracereplay", "tracereplay: a suite's cases as tests")
    group.addoption(
        "--tracereplay",
        action="append",
        dest="tracereplay_suites",
        metavar="SUITE",
        help="collect this suite's cases as test items (repeatable)",
    )
    group.addoption(
        "--tracereplay-agent",
        dest="tracereplay_agent",
        metavar="MODULE:ATTR",
        help="replay each case with this agent (as `tracereplay eval --agent`); "
        "without it the recorded runs are scored",
    )
    group.addoption(
        "--tracereplay-agent-cmd",
        dest="tracereplay_agent_cmd",
        metavar="COMMAND",
        help="replay each case with this command, in any language (as `tracereplay eval "
        "--agent-cmd`)",
    )
    group.addoption(
        "--tracereplay-llm",
        dest="tracereplay_llm",
        choices=("live", "recorded"),
        help="with an agent: `recorded` answers its LLM calls from the recording (offline)",
    )
    group.addoption(
        "--tracereplay-llm-until",
        dest="tracereplay_llm_until",
        type=int,
        metavar="N",
        help="with --tracereplay-llm recorded: a fork: LLM calls 1..N answered from the "
        "recording (their tools too), later ones sent to the agent's model",
    )
    group.addoption(
        "--tracereplay-history",
        dest="tracereplay_history",
        choices=("recorded", "replayed"),
        help="with an agent: a multi-turn case's later turns get the recorded answers "
        "(recorded, default) or the agent's own from this replay (replayed)",
    )
    group.addoption(
        "--tracereplay-live-tools",
        dest="tracereplay_live_tools",
        action="store_true",
        default=None,
        help="with an agent: run tool calls no recording answers for real; with "
        "--tracereplay-llm recorded, every tool call, each result compared with the recorded one",
    )
    group.addoption(
        "--tracereplay-db",
        dest="tracereplay_db",
        metavar="PATH",
        help="the store (default: $TRACEREPLAY_DB, else ./tracereplay.duckdb)",
    )
    group.addoption(
        "--tracereplay-label",
        dest="tracereplay_label",
        metavar="TEXT",
        help="a note stored with the eval run (e.g. the branch)",
    )
    group.addoption(
        "--tracereplay-eval-run",
        dest="tracereplay_eval_run",
        metavar="ID",
        help="add the results to this eval run (created when new): several CI jobs, one run",
    )
    group.addoption(
        "--tracereplay-fail-under",
        dest="tracereplay_fail_under",
        metavar="RATE",
        help="a gate: the session fails on the suites' cases only when a suite's pass rate "
        "(percent, 0-100) is below RATE (as `tracereplay eval --fail-under`)",
    )
    group.addoption(
        "--tracereplay-max-regressions",
        dest="tracereplay_max_regressions",
        metavar="N",
        help="a gate: the session fails on the suites' cases only when more than N cases that "
        "passed in a suite's baseline eval run do not pass now (as `tracereplay eval "
        "--max-regressions`)",
    )
    parser.addini("tracereplay_suite", "suites whose cases are collected", type="args")
    parser.addini("tracereplay_agent", "the agent to replay (MODULE:ATTR)")
    parser.addini("tracereplay_agent_cmd", "the agent command to replay (any language)")
    parser.addini("tracereplay_llm", "live or recorded")
    parser.addini("tracereplay_db", "the store (relative to the ini file)")
    parser.addini("tracereplay_label", "a note stored with each eval run")
    parser.addini("tracereplay_llm_until", "a fork at LLM call N (with tracereplay_llm recorded)")
    parser.addini("tracereplay_history", "recorded (default) or replayed")
    parser.addini("tracereplay_live_tools", "run tools for real (true/false)", type="bool")
    parser.addini("tracereplay_tool_match", "strict (default) or fifo")
    parser.addini(
        "tracereplay_concurrency",
        "cases replayed at once (default: one per core when answered wholly from the recording, else 4)",
    )
    parser.addini("tracereplay_timeout", "seconds per case attempt (default 60)")


class _Session:
    """What the plugin knows for one pytest session: the settings and the outcomes so far."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        opt = config.option
        self.suites: list[str] = list(opt.tracereplay_suites or config.getini("tracereplay_suite"))
        self.agent: str | None = opt.tracereplay_agent or config.getini("tracereplay_agent") or None
        self.agent_cmd: str | None = (
            opt.tracereplay_agent_cmd or config.getini("tracereplay_agent_cmd") or None
        )
        self.llm: str = opt.tracereplay_llm or config.getini("tracereplay_llm") or "live"
        self.llm_until = _llm_until(
            opt.tracereplay_llm_until, config.getini("tracereplay_llm_until")
        )
        self.history: str = (
            opt.tracereplay_history or config.getini("tracereplay_history") or "recorded"
        )
        if self.history not in ("recorded", "replayed"):
            raise pytest.UsageError(
                f"tracereplay: tracereplay_history must be recorded or replayed, not"
                f" '{self.history}'"
            )
        live = opt.tracereplay_live_tools
        self.live_tools: bool = bool(
            config.getini("tracereplay_live_tools") if live is None else live
        )
        if self.suites:
            self._check_replay_options()
        self.label: str | None = opt.tracereplay_label or config.getini("tracereplay_label") or None
        self.tool_match: str = config.getini("tracereplay_tool_match") or "strict"
        concurrency = config.getini("tracereplay_concurrency")
        #: None: ``eval``'s default (``evaluate.settings.default_concurrency``)
        self.concurrency: int | None = int(concurrency) if concurrency else None
        self.timeout = float(config.getini("tracereplay_timeout") or 60)
        self.db = _store_path(config, opt.tracereplay_db)
        workerinput = getattr(config, "workerinput", None)
        self.worker = workerinput is not None
        #: the session's eval run ids derive from this (the controller's, handed to workers)
        handed = workerinput.get(_WORKER_KEY) if workerinput is not None else None
        self.base: str = handed or opt.tracereplay_eval_run or str(uuid.uuid4())
        self.explicit_run: bool = bool(opt.tracereplay_eval_run)
        self.reports: dict[str, dict[str, CaseReport]] = {}
        self.eval_runs: dict[str, str] = {}
        #: suites whose evaluation could not be carried out: why (each of their items fails so)
        self.failures: dict[str, str] = {}
        self.fail_under, self.max_regressions = self._gates(opt)
        #: tests other than the suites' cases that failed (a gate never excuses them)
        self.other_failures = 0
        self.gate_lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Counts the failed tests that are not a suite's cases (registered as a plugin when
        a gate is given: the gates excuse only the cases)."""
        if report.failed and not report.nodeid.startswith("tracereplay:"):
            self.other_failures += 1

    @staticmethod
    def _gates(opt: Any) -> tuple[float | None, int | None]:
        from tracereplay.errors import BadParameterError
        from tracereplay.evaluate.settings import check_gates

        try:
            return check_gates(
                opt.tracereplay_fail_under, opt.tracereplay_max_regressions, "--tracereplay-"
            )
        except BadParameterError as err:
            raise pytest.UsageError(f"tracereplay: {err}") from None

    def _check_replay_options(self) -> None:
        """The rules of ``tracereplay eval``'s options (``settings.check_options``) under the
        plugin's names: a fork needs the recorded LLM (a usage error); unlike the command, the
        replay options do nothing without an agent (the ini file may set them for sessions
        run with and without one)."""
        from tracereplay.errors import BadParameterError
        from tracereplay.evaluate.settings import check_options

        try:
            check_options(
                agent=self.agent,
                agent_cmd=self.agent_cmd,
                llm=self.llm,
                llm_until=self.llm_until,
                live_tools=self.live_tools,
                prefix="--tracereplay-",
                agent_required=False,
            )
        except BadParameterError as err:
            raise pytest.UsageError(f"tracereplay: {err}") from None

    def eval_run_id(self, suite: str) -> str:
        """One eval run per suite and session (the same in every xdist worker)."""
        if self.explicit_run and len(self.suites) <= 1:
            return self.base
        try:
            namespace = uuid.UUID(self.base)
        except ValueError:
            namespace = uuid.uuid5(uuid.NAMESPACE_URL, self.base)
        return str(uuid.uuid5(namespace, suite))

    def settings(self, suite: str, case_ids: tuple[str, ...], **changes: Any) -> EvalSettings:
        from tracereplay.evaluate.settings import default_concurrency, eval_settings
        from tracereplay.scoring.runner import RunnerOptions

        fail_fast = self.config.option.maxfail == 1  # -x
        replays = bool(self.agent or self.agent_cmd)
        concurrency = self.concurrency
        if concurrency is None:  # a 0 given is RunnerOptions' usage error, as before
            concurrency = default_concurrency(
                agent=self.agent, llm=self.llm, llm_until=self.llm_until, live_tools=self.live_tools
            )
        values: dict[str, Any] = {
            "agent": self.agent,
            "agent_cmd": self.agent_cmd,
            "tool_match": self.tool_match,
            "llm": self.llm if replays else "live",
            "llm_until": self.llm_until if replays else None,
            "history": self.history,
            "live_tools": self.live_tools and replays,
            "label": self.label,
            "case_ids": case_ids,
            "eval_run": self.eval_run_id(suite),
            "in_process": self.worker,
            # -x: one case at a time, so that the eval really stops at the first failure
            "runner": RunnerOptions(
                concurrency=1 if fail_fast else concurrency,
                timeout_s=self.timeout,
                fail_fast=fail_fast,
            ),
        }
        values.update(changes)
        # checked once, as the session's options (check_options): a fixture's overrides are not
        return eval_settings(suite, self.db, **values)

    def report_for(self, item: CaseItem) -> CaseReport | None:
        """The case's report: evaluated now (an xdist worker), or with the session's other
        selected items of its suite the first time one of them runs."""
        if item.suite in self.failures:
            raise CaseNotPassed(self.failures[item.suite])
        done = self.reports.get(item.suite)
        if done is not None:
            return done.get(item.case.id)
        if self.worker:
            ids: tuple[str, ...] = (item.case.id,)
        else:
            ids = tuple(
                i.case.id
                for i in item.session.items
                if isinstance(i, CaseItem) and i.suite == item.suite
            )
        from tracereplay.errors import TraceReplayError
        from tracereplay.evaluate.evaluation import run_evaluation

        try:
            outcome = run_evaluation(self.settings(item.suite, ids))
        except TraceReplayError as err:  # the agent does not load, the store is gone ...
            self.failures[item.suite] = f"ERROR: the suite could not be evaluated: {err}"
            raise CaseNotPassed(self.failures[item.suite]) from None
        self.eval_runs[item.suite] = outcome.record.eval_run_id
        reports = {r.case.id: r for r in outcome.reports}
        if not self.worker:
            self.reports[item.suite] = reports
        return reports.get(item.case.id)


_STATE = pytest.StashKey[_Session]()


def _llm_until(option: int | None, ini: str) -> int | None:
    """``--tracereplay-llm-until`` (else the ini key) as a number of LLM calls, 0 or more."""
    if option is None and not ini.strip():
        return None
    try:
        n = option if option is not None else int(ini)
    except ValueError:
        raise pytest.UsageError(
            f"tracereplay: tracereplay_llm_until must be a whole number, not '{ini}'"
        ) from None
    if n < 0:
        raise pytest.UsageError("tracereplay: --tracereplay-llm-until must be 0 or more")
    return n


def _store_path(config: pytest.Config, option: str | None) -> Path:
    from tracereplay.store.paths import resolve_db_path

    if option:
        return resolve_db_path(option)
    ini = config.getini("tracereplay_db")
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return resolve_db_path(base / ini)
    return resolve_db_path(None)


def _evaluate(settings: EvalSettings) -> Any:
    from tracereplay.errors import TraceReplayError
    from tracereplay.evaluate.evaluation import run_evaluation

    try:
        return run_evaluation(settings)
    except TraceReplayError as err:
        raise pytest.UsageError(f"tracereplay: {err}") from None


def _not_rewritten(config: pytest.Config) -> None:
    """tracereplay's modules imported as they are, not assertion-rewritten: pytest rewrites
    every module of a distribution that registers a plugin, and nothing of tracereplay's is a
    test whose asserts need explaining. Rewritten, the modules a replay session imports cost
    it about 0.25 s more of CPU where nothing caches the rewritten bytecode
    (``PYTHONDONTWRITEBYTECODE``, a fresh CI checkout): benchmarks/RESULTS.md."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "tracereplay" in marked:
        marked.discard("tracereplay")
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def pytest_configure(config: pytest.Config) -> None:
    _not_rewritten(config)
    state = _Session(config)
    if state.suites:  # nothing else to do in a session that names no suite
        config.stash[_STATE] = state
        if state.fail_under is not None or state.max_regressions is not None:
            config.pluginmanager.register(state, "tracereplay-gates")
        distributed = getattr(config.option, "dist", "no") != "no"  # xdist workers replay
        if state.agent and not (state.worker or distributed or config.option.collectonly):
            # the agent processes' fork server imports while pytest collects (as
            # ``tracereplay eval`` starts it before parsing its command line): the first
            # agent process waits for those imports when the first case runs
            from tracereplay.replay.workers.preload import start_agent_server

            start_agent_server(state.agent)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker evaluates into the controller's eval runs."""
    state = node.config.stash.get(_STATE, None)
    if state is not None:
        node.workerinput[_WORKER_KEY] = state.base


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The suites' cases join the collected items before ``-k``/``-m`` deselect any."""
    state = config.stash.get(_STATE, None)
    if state is None or not state.suites:
        return
    from tracereplay.errors import TraceReplayError

    for suite in state.suites:
        collector = SuiteCollector.from_parent(session, name=suite, nodeid=f"tracereplay:{suite}")
        try:
            collected = list(collector.collect())
        except TraceReplayError as err:
            raise pytest.UsageError(f"tracereplay: suite '{suite}': {err}") from None
        config.hook.pytest_collectreport(
            report=pytest.CollectReport(collector.nodeid, "passed", None, collected)
        )
        for item in collected:
            config.hook.pytest_itemcollected(item=item)
        items.extend(collected)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With a gate, the session's exit status on the suites' cases is the gates' verdict."""
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None or state.worker or not state.suites:
        return
    if state.fail_under is None and state.max_regressions is None:
        return
    from tracereplay.errors import TraceReplayError
    from tracereplay.evaluate.gates import gate_report
    from tracereplay.evaluate.results_store import get_eval_run
    from tracereplay.store.open import open_store

    failed = bool(state.failures)
    for suite in state.suites:
        try:
            with open_store(state.db, drain=False) as store:
                rec = get_eval_run(store, state.eval_runs.get(suite) or state.eval_run_id(suite))
        except TraceReplayError:
            continue  # no case of it ran (all deselected)
        gates = gate_report(
            state.db, rec, state.fail_under, state.max_regressions, "--tracereplay-"
        )
        failed = failed or gates.failed
        state.gate_lines += [f"suite {rec.suite_name}: {line}" for line in gates.lines()]
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return  # interrupted, a usage error ...: left as it is
    if failed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif state.other_failures == 0:
        session.exitstatus = pytest.ExitCode.OK


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or state.worker or not state.suites:
        return
    from tracereplay.errors import TraceReplayError
    from tracereplay.evaluate.results_store import get_eval_run
    from tracereplay.store.open import open_store

    lines = []
    try:
        with open_store(state.db, drain=False) as store:
            for suite in state.suites:
                try:
                    rec = get_eval_run(
                        store, state.eval_runs.get(suite) or state.eval_run_id(suite)
                    )
                except TraceReplayError:
                    continue  # no case of it ran (all deselected)
                rate = "-" if rec.pass_rate is None else f"{rec.pass_rate:.1%}"
                lines.append(
                    f"suite {rec.suite_name}: eval run {rec.eval_run_id} ({rec.mode}):"
                    f" {rec.passed} passed, {rec.failed} failed, {rec.errored} errored,"
                    f" pass rate {rate}"
                )
    except TraceReplayError as err:
        lines.append(f"could not read the eval runs: {err}")
    lines += state.gate_lines
    if lines:
        terminalreporter.section("tracereplay")
        for line in lines:
            terminalreporter.line(line)


class SuiteCollector(pytest.Collector):
    """A suite of the store: one ``CaseItem`` per case, in ``seq`` order."""

    def collect(self) -> list[CaseItem]:
        import tracereplay.ingest  # noqa: F401  (registers the drain: open_store reads the spool)
        from tracereplay.store.open import open_store
        from tracereplay.store.suites import get_suite, list_cases

        state = self.config.stash[_STATE]
        with open_store(state.db) as store:
            suite = get_suite(store, self.name)
            cases = list_cases(store, suite.id)
        return [CaseItem.from_parent(self, name=case_name(c), case=c) for c in cases]


def case_name(case: EvalCase) -> str:
    """``case<seq>[<first words of the query>]``: what ``-k`` and the reports show."""
    words = re.findall(r"[A-Za-z0-9]+", case.query.lower())[:8]
    return f"case{case.seq}[{'-'.join(words) or case.id[:8]}]"


class CaseNotPassed(Exception):
    """A case whose verdict is not PASSED; the message says why."""


class CaseItem(pytest.Item):
    """One case of a suite; passes when the case's verdict is PASSED."""

    def __init__(self, *, case: EvalCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.suite = self.parent.name if self.parent is not None else ""
        self.extra_keyword_matches.update(case.tags)
        self.extra_keyword_matches.update({case.id, case.id[:8], f"seq{case.seq}"})

    def runtest(self) -> None:
        report = self.config.stash[_STATE].report_for(self)
        if report is None:
            pytest.skip("not run: the eval stopped at the first case that did not pass (-x)")
        from tracereplay.models import Status

        if report.result.status is not Status.PASSED:
            raise CaseNotPassed(failure_text(report))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseNotPassed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return (
            self.path,
            None,
            f"tracereplay {self.suite} case {self.case.seq} ({self.case.id[:8]})",
        )


def failure_text(report: CaseReport) -> str:
    """The verdict, its reason, every check that did not pass, the response and the drift."""
    from tracereplay.evaluate.formats.notes import problem_notes

    r = report.result
    lines = [f"{r.status.value}: {r.reason}", f"query: {report.case.query}"]
    for check in r.checks:
        said = f"{check.check}: {check.explanation}"
        if not check.passed and said not in r.reason:
            lines.append(f"  {check.status.value} {said}")
    turns = next((run.turns for run in report.runs if run.turns), [])
    for turn in turns:  # a multi-turn case: each turn's question, verdict and answer
        question = report.case.turns[turn.turn - 1].query if turn.turn else ""
        lines.append(f"turn {turn.turn} {turn.status.value}: {question}")
        lines.append(f"  response: {turn.response}")
    response = next((run.response for run in report.runs if run.response is not None), None)
    if response is not None and not turns:
        lines.append(f"response: {response}")
    lines += [f"  {note}" for note in problem_notes(report)]
    return "\n".join(lines)


def suite_cases(suite: str, db: str | Path | None = None) -> list[Any]:
    """The suite's cases as ``pytest.param``s (ids as the plugin names its items), for
    ``@pytest.mark.parametrize("case", suite_cases("weather"))``."""
    import tracereplay.ingest  # noqa: F401  (registers the drain: open_store reads the spool)
    from tracereplay.store.open import open_store
    from tracereplay.store.paths import resolve_db_path
    from tracereplay.store.suites import get_suite, list_cases

    with open_store(resolve_db_path(db)) as store:
        found = get_suite(store, suite)
        cases = list_cases(store, found.id)
    return [pytest.param(c, id=case_name(c)) for c in cases]


@pytest.fixture
def tracereplay_eval(request: pytest.FixtureRequest) -> Callable[..., CaseReport]:
    """``tracereplay_eval(case, agent=None, llm=None)``: evaluate one case (replayed with
    ``agent``, else the plugin's ``--tracereplay-agent``, else recorded) into the session's eval
    run of its suite, and return its ``CaseReport`` for your own assertions."""
    config = request.config
    state = config.stash.get(_STATE, None)
    if state is None:
        state = config.stash[_STATE] = _Session(config)

    def evaluate(case: EvalCase, agent: str | None = None, llm: str | None = None) -> CaseReport:
        from tracereplay.store.open import open_store
        from tracereplay.store.suites import find_suite_by_id

        with open_store(state.db, drain=False) as store:
            found = find_suite_by_id(store, case.suite_id)
        if found is None:
            raise pytest.UsageError(f"tracereplay: case {case.id}'s suite is not in {state.db}")
        suite = found.name
        changes: dict[str, Any] = {"in_process": True}
        if agent is not None:
            changes["agent"], changes["agent_cmd"] = agent, None
        if llm is not None:
            changes["llm"] = llm
        outcome = _evaluate(state.settings(suite, (case.id,), **changes))
        return outcome.reports[0]

    return evaluate
