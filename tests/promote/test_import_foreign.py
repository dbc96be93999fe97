"""``tracereplay suite import`` of other tools' files: AgenticAssure suites, testing-api
TestSets (with a MetricConfiguration), Tracon EvalCase lists and ffai AgentResult lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from promote_helpers import CliResult, suite_and_cases

from tracereplay.promote.foreign import detect
from tracereplay.store import Store

Cli = Callable[..., CliResult]
BIN = Path(sys.executable).parent

AA_SUITE = """\
suite:
  name: support
  description: the support agent
  config: {default_timeout: 12.5, retries: 2, default_scorers: [passfail, exact], fail_fast: true}
scenarios:
  - name: weather
    input: What is the weather in London?
    expected_output: degrees
    expected_tools: [get_weather]
    expected_tool_args: {get_weather: {location: London}}
    tags: [tools]
    metadata: {regex_pattern: '\\d+ degrees', owner: me}
    scorers: [passfail, regex]
    timeout_seconds: 60
  - {name: greet, input: Hello}
"""

TEST_SET = {
    "id": "ts_98765",
    "name": "Customer Intent Classification - Production",
    "version": "2.1.0",
    "cases": [
        {
            "caseId": "case_001",
            "input": {"text": "How do I reset my password?", "locale": "en", "priority": 1},
            "expectedOutput": "account_security_intent",
            "metadata": {"category": "security", "priority": 1},
        },
        {
            "caseId": "case_002",
            "input": {"prompt": "Cancel my order"},
            "expectedOutput": "cancel_intent",
        },
        {"caseId": "case_003", "input": "Where is my parcel?", "expectedOutput": "shipping_intent"},
    ],
}


def test_agenticassure_booleans_read_as_agenticassure_reads_them(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    """AgenticAssure reads its files with PyYAML (YAML 1.1): ``no``/``off`` are false there,
    though suite files are YAML 1.2 (where they are text)."""
    path = tmp_path / "aa.yaml"
    path.write_text(
        "suite: {name: words, config: {fail_fast: yes}}\n"
        "scenarios:\n"
        "  - {name: a, input: Hi, expected_output: HI, scorers: [exact],"
        " metadata: {exact_normalize: no}}\n"
        "  - {name: b, input: Yo, expected_output: yo, scorers: [exact],"
        " metadata: {exact_normalize: On}}\n",
        encoding="utf-8",
    )
    done = cli("suite", "import", str(path))
    assert done.exit_code == 0, done.stderr
    suite, (a, b) = suite_and_cases(db, "words")
    assert suite.metadata["eval_defaults"] == {"fail_fast": True}
    assert [c.options["normalize"] for c in a.checks + b.checks] == [[], ["strip", "lower"]]


def test_detects_each_format() -> None:
    assert detect({"scenarios": []}) == "agenticassure"
    assert detect(TEST_SET) == "testing-api"
    assert detect([{"query": "q", "seq": 0, "suiteId": "x"}]) == "tracon"
    assert detect([{"query": "q", "response": "a", "tool_calls": []}]) == "ffai"
    assert detect({"format": "tracereplay-suite/1", "name": "x", "cases": []}) is None
    assert detect({"name": "x", "cases": [{"query": "q"}]}) is None


def test_agenticassure_suite_imports_with_its_config(db: Path, cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "support.yaml"
    path.write_text(AA_SUITE, encoding="utf-8")
    done = cli("suite", "import", str(path))
    assert done.exit_code == 0, done.stderr
    assert "suite 'support' created with 2 cases (from agenticassure)" in done.stdout
    suite, cases = suite_and_cases(db, "support")
    assert suite.description == "the support agent"
    assert suite.metadata["eval_defaults"] == {"timeout": 12.5, "retries": 2, "fail_fast": True}
    assert [c.kind for c in suite.checks] == ["passfail", "exact"]
    weather, greet = cases
    assert weather.query == "What is the weather in London?"
    assert [(e.name, e.arguments) for e in weather.expected_tool_calls] == [
        ("get_weather", {"location": "London"})
    ]
    assert [c.kind for c in weather.checks or []] == ["passfail", "regex"]
    assert weather.checks and weather.checks[1].options == {"pattern": "\\d+ degrees"}
    assert weather.tags == ["tools"]
    assert weather.metadata["owner"] == "me"
    assert weather.metadata["agenticassure"]["timeout_seconds"] == 60
    assert [c.kind for c in greet.checks or []] == ["passfail"]  # 0.4.0: not default_scorers
    again = cli("suite", "import", str(path))
    assert "suite 'support' unchanged (2 cases)" in again.stdout
    # the suite's defaults become eval's, and the export carries them
    exported = cli("suite", "export", "support", "--format", "json")
    assert json.loads(exported.stdout)["metadata"]["eval_defaults"]["retries"] == 2


def test_agenticassure_problems_are_listed_and_nothing_changes(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "suite: {name: bad, config: {retries: -1, colour: red}}\n"
        "scenarios:\n"
        "  - {name: a, input: '   '}\n"
        "  - {name: b, input: x, scorers: [nosuch]}\n"
        "  - {input: y, metadata: {similarity_threshold: 3}, scorers: [similarity]}\n",
        encoding="utf-8",
    )
    done = cli("suite", "import", str(path))
    assert done.exit_code == 2
    assert "5 problems (nothing was changed)" in done.stderr
    for text in (
        "bad.yaml:1: suite.config.colour: unknown field",
        "suite.config.retries: must be a whole number",
        "scenarios[0].input: query must not be empty",
        "scenarios[1].scorers: scorer 'nosuch' is not one of",
        "scenarios[2].name: missing (required)",
    ):
        assert text in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert Store  # the store was never written: no suite
    assert cli("suite", "list").stdout.count("bad") == 0


def test_testing_api_test_set_with_a_metric(db: Path, cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "intents.json"
    path.write_text(json.dumps(TEST_SET), encoding="utf-8")
    metric = tmp_path / "metric.json"
    metric.write_text('{"metricType": "FUZZY_MATCH", "threshold": 0.85}', encoding="utf-8")
    done = cli("suite", "import", str(path), "--metric", str(metric))
    assert done.exit_code == 0, done.stderr
    suite, cases = suite_and_cases(db, "Customer Intent Classification - Production")
    assert suite.metadata["testing_api"] == {"id": "ts_98765", "version": "2.1.0"}
    assert [(c.kind, c.options) for c in suite.checks] == [
        ("fuzzy", {"threshold": 0.85, "caseSensitive": False})
    ]
    assert [c.query for c in cases] == [
        "How do I reset my password?",
        "Cancel my order",
        "Where is my parcel?",
    ]
    assert cases[0].parameters == {
        "text": "How do I reset my password?",
        "locale": "en",
        "priority": "1",
    }
    assert cases[0].metadata == {
        "category": "security",
        "priority": 1,
        "testing_api": {"caseId": "case_001"},
    }
    assert cases[0].expected_output == "account_security_intent"
    ids = [c.id for c in cases]
    assert cli("suite", "import", str(path), "--metric", str(metric)).exit_code == 0
    assert [c.id for c in suite_and_cases(db, suite.name)[1]] == ids  # caseIds keep case ids
    # each metric type, and a bad one
    for body, kind in (
        ('{"metricType": "EXACT_MATCH", "threshold": 1, "caseSensitive": true}', "exact"),
        ('{"metricType": "COSINE_SIMILARITY", "threshold": 0.85}', "similarity"),
    ):
        metric.write_text(body, encoding="utf-8")
        assert cli("suite", "import", str(path), "--metric", str(metric)).exit_code == 0
        assert suite_and_cases(db, suite.name)[0].checks[0].kind == kind
    metric.write_text('{"metricType": "BLEU", "threshold": 2}', encoding="utf-8")
    bad = cli("suite", "import", str(path), "--metric", str(metric))
    assert bad.exit_code == 2 and "metricType: must be one of" in bad.stderr


def test_testing_api_eval_writes_evaluation_results(tmp_path: Path) -> None:
    """Replay with a plain agent; ``--format testing-api-json`` gives caseId/status/score, the
    FUZZY_MATCH check passing at score >= threshold."""
    (tmp_path / "intents.json").write_text(json.dumps(TEST_SET), encoding="utf-8")
    (tmp_path / "metric.json").write_text(
        '{"metricType": "FUZZY_MATCH", "threshold": 0.85}', encoding="utf-8"
    )
    (tmp_path / "intent_agent.py").write_text(
        "def classify(query, parameters=None):\n"
        "    if 'password' in query:\n"
        "        return 'Account_Security_Intent'\n"
        "    return 'cancel_intents' if 'Cancel' in query else 'unknown'\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("TRACEREPLAY_DB", None)
    tr = [str(BIN / "tracereplay"), "--db", str(tmp_path / "t.duckdb")]
    subprocess.run(
        [*tr, "suite", "import", "intents.json", "--metric", "metric.json"],
        cwd=tmp_path, env=env, check=True, capture_output=True,
    )  # fmt: skip
    done = subprocess.run(
        [*tr, "eval", "Customer Intent Classification - Production", "--agent",
         "intent_agent:classify", "--format", "testing-api-json"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)
    assert [(r["caseId"], r["status"]) for r in results] == [
        ("case_001", "PASSED"),
        ("case_002", "PASSED"),
        ("case_003", "FAILED"),
    ]
    assert results[0]["score"] == 1.0
    assert 0.85 <= results[1]["score"] < 1.0
    assert results[2]["score"] < 0.85 and results[2]["reason"]


def test_tracon_eval_cases_keep_every_field(db: Path, cli: Cli, tmp_path: Path) -> None:
    suite_id = "0b8f0c5e-4f7e-4d55-9b8a-3f1c2d9e7a10"
    run_id = "6c1d2f0a-1b2c-4d3e-8f9a-0b1c2d3e4f5a"
    docs = (
        "-----BEGIN TRACON DOCUMENT-----\nname: refund-policy.md\n\nRefunds within 30 days.\n"
        "-----END TRACON DOCUMENT-----"
    )
    cases = [
        {
            "id": "9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "suiteId": suite_id,
            "seq": 0,
            "query": "Can I get a refund?",
            "context": docs,
            "expectedOutput": "30 days",
            "expectedToolCalls": [{"name": "lookup_order", "arguments": {"id": 7}}, {"name": "x"}],
            "parameters": {"company": "Acme"},
            "promotedAt": "2026-11-02T10:00:00+00:00",
            "sourceKind": "FailedRun",
            "sourceRunId": run_id,
        },
        {"Id": "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4e", "SuiteId": suite_id, "Seq": 1,
         "Query": "Hello", "Context": "plain text", "SourceKind": "reference_run"},
    ]  # fmt: skip
    path = tmp_path / "tracon_cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    done = cli("suite", "import", str(path), "--name", "refunds")
    assert done.exit_code == 0, done.stderr
    suite, stored = suite_and_cases(db, "refunds")
    assert suite.id == suite_id
    first, second = stored
    assert first.id == cases[0]["id"] and first.seq == 0
    assert [(d.name, d.content) for d in first.context] == [
        ("refund-policy.md", "Refunds within 30 days.")
    ]
    assert first.expected_output == "30 days"
    assert [(e.name, e.arguments) for e in first.expected_tool_calls] == [
        ("lookup_order", {"id": 7}),
        ("x", None),
    ]
    assert first.parameters == {"company": "Acme"}
    assert first.promoted_at is not None and first.promoted_at.isoformat().startswith("2026-11-02")
    assert (first.source_kind, first.source_run_id) == ("failed_run", run_id)
    assert (second.query, second.source_kind) == ("Hello", "reference_run")
    assert [(d.name, d.content) for d in second.context] == [("context", "plain text")]


def test_ffai_results_become_imported_runs_that_promote(db: Path, cli: Cli, tmp_path: Path) -> None:
    results = [
        {
            "query": "Weather in Oslo?",
            "response": "It is 3 degrees in Oslo.",
            "tool_calls": [
                {"round": 1, "tool_name": "get_weather", "tool_call_id": "c1",
                 "arguments": {"city": "Oslo"}, "result": "3C", "duration_ms": 12.0, "error": None}
            ],
            "total_rounds": 2,
            "total_llm_calls": 2,
            "status": "success",
            "agent_name": "weather",
        },
        {"query": "Crash?", "result": {"response": "", "status": "failed"}},
    ]  # fmt: skip
    path = tmp_path / "ffai_results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    done = cli("suite", "import", str(path))
    assert done.exit_code == 0, done.stderr
    assert "imported 2 runs of kind imported (0 replacing" in done.stdout
    again = cli("suite", "import", str(path))
    assert "(2 replacing earlier imports)" in again.stdout
    with Store.open(db) as store:
        rows = store.query_dicts(
            "SELECT run_id, kind, query, status, tool_calls_count FROM runs ORDER BY query DESC"
        )
        assert [(r["kind"], r["query"], r["status"], r["tool_calls_count"]) for r in rows] == [
            ("imported", "Weather in Oslo?", "success", 1),
            ("imported", "Crash?", "failed", 0),
        ]
        run = store.get_run(rows[0]["run_id"])
    assert run.result.tool_calls[0].arguments == {"city": "Oslo"}
    assert run.agent_name == "weather"
    promoted = cli("promote", rows[0]["run_id"], "--suite", "oslo")
    assert promoted.exit_code == 0, promoted.stderr
    _, cases = suite_and_cases(db, "oslo")
    assert cases[0].query == "Weather in Oslo?" and cases[0].source_run_id == rows[0]["run_id"]
    assert cli("eval", "oslo").exit_code == 0  # recorded mode scores the imported run
    bad = tmp_path / "bad.json"
    bad.write_text('[{"query": "q", "response": 5, "tool_calls": []}]', encoding="utf-8")
    failed = cli("suite", "import", str(bad))
    assert failed.exit_code == 2 and "[0].response" in failed.stderr
