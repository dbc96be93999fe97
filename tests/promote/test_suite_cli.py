"""`tracereplay suite ...` and `tracereplay case ...`, driven as a user would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from promote_helpers import CliResult, add_runs, make_run, suite_and_cases

from tracereplay.models import CheckSpec, Document, EvalExpectedToolCall
from tracereplay.promote.documents import format_documents
from tracereplay.store import Store

Cli = Callable[..., CliResult]


def build_suite(db: Path, cli: Cli) -> None:
    """A suite with promoted and hand-written cases, context documents, parameters, tags."""
    docs = [
        Document(name="policy.md", content="Refunds within 30 days.\n-----\nNo cash."),
        Document(content="x"),
    ]
    add_runs(
        db, [make_run(0, context=docs, parameters={"tenant": "acme"}), make_run(1, status="failed")]
    )
    assert cli("promote", "--where", "true", "--suite", "support", "--tag", "prod").exit_code == 0
    added = cli(
        "case", "add", "--suite", "support", "--query", "Línea 1\nline [2]",
        "--expected-output", "refund", "--param", "tenant=acme", "--param", "eq=a=b",
        "--expected-tool", 'lookup:{"id": 7, "deep": {"ok": [1, 2.5, null]}}',
        "--expected-tool", "notify", "--tag", "hand",
    )  # fmt: skip
    assert added.exit_code == 0, added.stderr


def test_create_list_and_show(db: Path, cli: Cli, tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text(
        "- kind: nonEmpty\n  minLength: 5\n- kind: keywords\n  name: mentions refund\n  values: [refund]\n"
    )
    made = cli(
        "suite", "create", "refunds", "--agent", "support_bot", "--description", "[red]money[/red]",
        "--checks", str(checks), "--require-param", "tenant",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    assert cli("suite", "create", "plain").exit_code == 0
    suite, cases = suite_and_cases(db, "refunds")
    assert suite.id == made.stdout.strip() and cases == []
    assert suite.checks == [
        CheckSpec(kind="nonEmpty", minLength=5),
        CheckSpec(kind="keywords", name="mentions refund", values=["refund"]),
    ]
    assert suite.required_parameters == ["tenant"] and suite.agent_name == "support_bot"
    assert [c.kind for c in suite_and_cases(db, "plain")[0].checks] == [
        "status",
        "containsExpected",
        "toolCallArgsMatch",
    ]
    listed = json.loads(cli("suite", "list", "--format", "json").stdout)
    assert [(s["name"], s["cases"], s["checks"]) for s in listed] == [
        ("plain", 0, ["status", "containsExpected", "toolCallArgsMatch"]),
        ("refunds", 0, ["nonEmpty", "mentions refund"]),
    ]
    table = cli("suite", "list")
    assert table.exit_code == 0 and "refunds" in table.stdout and "support_bot" in table.stdout
    shown = cli("suite", "show", "refunds")
    assert shown.exit_code == 0
    assert "[red]money[/red]" in shown.stdout  # user text is never rich markup
    assert 'nonEmpty {"minLength":5}' in shown.stdout and "tenant" in shown.stdout
    assert cli("suite", "show", suite.id[:8]).exit_code == 0  # by id prefix too


def test_create_rejects_bad_input_in_one_line(db: Path, cli: Cli, tmp_path: Path) -> None:
    assert cli("suite", "create", "taken").exit_code == 0
    bad_checks = tmp_path / "bad.yaml"
    bad_checks.write_text("- kind: nonEmpty\n  minLength: lots\n")
    for args, message in [
        (["taken"], "a suite named 'taken' already exists"),
        (["x", "--checks", str(tmp_path / "missing.yaml")], "no such file"),
        (["x", "--checks", str(bad_checks)], "bad.yaml:1: [0]: nonEmpty: option 'minLength'"),
        (["x", "--require-param", "not a name"], "not a parameter name"),
        (
            ["x", "--checks-module", "no_such_module_here"],
            "cannot import check module 'no_such_module_here'",
        ),
    ]:
        result = cli("suite", "create", *args)
        assert result.exit_code == 2 and len(result.error_lines) == 1, result.stderr
        assert message in result.error_lines[0], (message, result.stderr)
    assert [s["name"] for s in json.loads(cli("suite", "list", "-f", "json").stdout)] == ["taken"]


def test_custom_check_kinds_validate_once_their_module_is_imported(
    db: Path, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_promote_checks.py").write_text(
        "from tracereplay import check\n\n"
        "@check('politeForPromoteTest')\n"
        "def polite(subject, word: str = 'please') -> bool:\n"
        "    return word in subject.output\n"
    )
    checks = tmp_path / "c.json"
    checks.write_text('[{"kind": "politeForPromoteTest", "word": "thanks"}]')
    monkeypatch.chdir(tmp_path)
    without = cli("suite", "create", "polite", "--checks", str(checks))
    assert without.exit_code == 2 and "unknown check kind 'politeForPromoteTest'" in without.stderr
    made = cli(
        "suite", "create", "polite", "--checks", str(checks), "--checks-module", "my_promote_checks"
    )
    assert made.exit_code == 0, made.stderr


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_export_import_round_trip_is_lossless(db: Path, cli: Cli, tmp_path: Path, ext: str) -> None:
    build_suite(db, cli)
    out = tmp_path / f"support.{ext}"
    exported = cli("suite", "export", "support", "-o", str(out))
    assert exported.exit_code == 0, exported.stderr
    text = out.read_text()
    if ext == "json":
        assert json.loads(text)["cases"][2]["expected_tool_calls"][0]["arguments"]["deep"] == {
            "ok": [1, 2.5, None]
        }
    else:
        assert "query: |-\n    Línea 1\n    line [2]" in text  # multi-line text as a block
    # into a fresh store: identical, ids and seq included
    other = tmp_path / "other.duckdb"
    imported = cli("suite", "import", str(out), db_path=other)
    assert imported.exit_code == 0, imported.stderr
    assert imported.stdout.strip() == "suite 'support' created with 3 cases"
    assert suite_and_cases(other, "support") == suite_and_cases(db, "support")
    again = tmp_path / f"again.{ext}"
    assert cli("suite", "export", "support", "-o", str(again), db_path=other).exit_code == 0
    assert again.read_text() == text
    # into the same store: nothing to do
    same = cli("suite", "import", str(out))
    assert same.stdout.strip() == "suite 'support' unchanged (3 cases)"
    # stdout export equals the file
    assert cli("suite", "export", "support", "--format", ext).stdout == text


def test_import_updates_an_existing_suite_as_the_file_says(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    build_suite(db, cli)
    before_suite, before = suite_and_cases(db, "support")
    out = tmp_path / "support.yaml"
    cli("suite", "export", "support", "-o", str(out))
    import yaml

    data = yaml.safe_load(out.read_text())
    data["description"] = "edited in review"
    data["cases"][0]["expected_output"] = "It is sunny"  # updated
    del data["cases"][1]  # removed
    data["cases"].append({"query": "new hand-written case", "tags": ["added"]})  # added, no id/seq
    out.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    dry = cli("suite", "import", str(out), "--dry-run")
    assert (
        dry.stdout.strip()
        == "would be: suite 'support' and its fields updated: 1 added, 1 updated, 1 removed, 1 unchanged cases"
    )
    assert suite_and_cases(db, "support") == (before_suite, before)
    done = cli("suite", "import", str(out))
    assert done.stdout.strip() == dry.stdout.strip().removeprefix("would be: ")
    suite, cases = suite_and_cases(db, "support")
    assert suite.id == before_suite.id and suite.description == "edited in review"
    assert (
        suite.created_at == before_suite.created_at and suite.updated_at > before_suite.updated_at
    )
    assert [(c.id, c.seq) for c in cases[:2]] == [(before[0].id, 0), (before[2].id, 2)]
    assert cases[0].expected_output == "It is sunny" and cases[1] == before[2]
    assert (cases[2].seq, cases[2].query, cases[2].promoted_at) == (
        3,
        "new hand-written case",
        None,
    )
    # importing the same hand-written file again matches the id-less case by its query
    assert cli("suite", "import", str(out)).stdout.strip() == "suite 'support' unchanged (3 cases)"
    assert suite_and_cases(db, "support")[1] == cases


def test_import_reports_every_problem_and_changes_nothing(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    build_suite(db, cli)
    before = suite_and_cases(db, "support")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: support\n"
        "checks:\n  - kind: bogus\n"
        "cases:\n"
        "  - query: ok\n    seq: 0\n"
        "  - query: dup\n    seq: 0\n"
        "  - query: ''\n"
    )
    result = cli("suite", "import", str(bad))
    assert result.exit_code == 2
    problems = result.stderr.splitlines()
    assert problems[0].startswith(f"{bad}:3: checks[0].kind: unknown check kind 'bogus'")
    assert problems[1] == f"{bad}:8: cases[1].seq: 0 is also the seq of cases[0]"
    assert problems[2] == f"{bad}:9: cases[2].query: query must not be empty"
    assert problems[3] == f"error: {bad}: 3 problems (nothing was changed)"
    assert len(problems) == 4
    assert suite_and_cases(db, "support") == before
    # conflicts with the store are problems with lines too
    exported = tmp_path / "s.yaml"
    cli("suite", "export", "support", "-o", str(exported))
    assert cli("suite", "create", "other").exit_code == 0
    renamed = exported.read_text().replace("name: support", "name: other")
    exported.write_text(renamed)
    clash = cli("suite", "import", str(exported))
    assert clash.exit_code == 2 and "s.yaml:3: name: another suite" in clash.stderr, clash.stderr
    garbage = tmp_path / "g.json"
    garbage.write_text("{not json")
    assert (
        cli("suite", "import", str(garbage))
        .error_lines[0]
        .startswith(f"error: {garbage}:1: not valid JSON")
    )
    assert cli("suite", "import", str(tmp_path / "nope.yaml")).error_lines == [
        f"error: no such file: {tmp_path / 'nope.yaml'}"
    ]


def test_a_case_id_of_another_suite_is_refused_with_its_line(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    build_suite(db, cli)
    taken = suite_and_cases(db, "support")[1][0].id
    own = tmp_path / "own.yaml"
    own.write_text(f"name: own\ncases:\n  - id: '{taken}'\n    query: mine\n")
    result = cli("suite", "import", str(own))
    assert result.exit_code == 2
    assert result.error_lines == [
        f"error: {own}:3: cases[0].id: belongs to a case of suite 'support' (nothing was changed)"
    ]
    # the suite's own ids, imported again into a store of that suite only, are its own
    exported = tmp_path / "support.yaml"
    assert cli("suite", "export", "support", "-o", str(exported)).exit_code == 0
    assert cli("suite", "rm", "support").exit_code == 0
    assert cli("suite", "import", str(exported)).exit_code == 0
    again = cli("suite", "import", str(exported))
    assert (again.exit_code, again.stdout.strip()) == (0, "suite 'support' unchanged (3 cases)")


def test_import_from_stdin_and_hand_written_json(db: Path, cli: Cli) -> None:
    text = json.dumps(
        {
            "name": "hand",
            "required_parameters": ["tenant"],
            "cases": [{"query": "hi", "parameters": {"tenant": "a"}}],
        }
    )
    result = cli("suite", "import", "-", input=text)
    assert result.exit_code == 0, result.stderr
    suite, [case] = suite_and_cases(db, "hand")
    assert case.seq == 0 and case.parameters == {"tenant": "a"} and case.source_kind is None
    assert [c.kind for c in suite.checks] == []  # a file without checks has none


def test_case_add_show_and_rm(db: Path, cli: Cli, tmp_path: Path) -> None:
    assert cli("suite", "create", "s").exit_code == 0
    docs = [Document(name="a.md", content="alpha\n- item"), Document(name="b", content="")]
    ctx = tmp_path / "ctx.txt"
    ctx.write_text(format_documents(docs))
    a = cli(
        "case", "add", "-s", "s", "-q", "first", "--context-file", str(ctx), "--expected-tool", "t"
    )
    b = cli("case", "add", "-s", "s", "-q", "second", "--context", "just some text")
    assert a.exit_code == 0 and b.exit_code == 0, a.stderr + b.stderr
    _, (ca, cb) = suite_and_cases(db, "s")
    assert (ca.id, ca.seq, ca.context, ca.expected_tool_calls) == (
        a.stdout.strip(),
        0,
        docs,
        [EvalExpectedToolCall(name="t")],
    )
    assert cb.context == [Document(name="context", content="just some text")] and cb.seq == 1
    assert ca.promoted_at is None and ca.source_kind is None and ca.source_run_id is None
    shown = cli("case", "show", ca.id[:8])
    assert shown.stdout.startswith("# case #0 of suite 's'\n") and "name: a.md" in shown.stdout
    assert json.loads(cli("case", "show", ca.id, "-f", "json").stdout)["id"] == ca.id
    removed = cli("case", "rm", ca.id[:10])
    assert removed.exit_code == 0 and f"removed case #0 {ca.id} from suite 's'" in removed.stdout
    c = cli("case", "add", "-s", "s", "-q", "third")
    _, cases = suite_and_cases(db, "s")
    assert [(x.seq, x.query) for x in cases] == [
        (1, "second"),
        (2, "third"),
    ]  # seqs stay, new one after
    assert cli("case", "rm", c.stdout.strip(), "zzzz").exit_code == 2  # all ids resolved first
    assert len(suite_and_cases(db, "s")[1]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-s", "nope", "-q", "x"], "no suite named 'nope' (suites: s)"),
        (["-s", "s", "-q", "  "], "invalid case: query: query must not be empty"),
        (
            ["-s", "s", "-q", "x", "--param", "novalue"],
            "--param 'novalue' must look like name=value",
        ),
        (["-s", "s", "-q", "x", "--expected-tool", "t:{bad"], "are not JSON"),
        (["-s", "s", "-q", "x", "--expected-tool", "t:[1]"], "must be a JSON object"),
        (["-s", "s", "-q", "x", "--context", "a", "--context-file", "f"], "not both"),
        (
            ["-s", "s", "-q", "x", "--context", "-----BEGIN TRACON DOCUMENT-----\nname: a"],
            "context: document text line 1",
        ),
    ],
)
def test_case_add_bad_input(db: Path, cli: Cli, args: list[str], message: str) -> None:
    assert cli("suite", "create", "s").exit_code == 0
    result = cli("case", "add", *args)
    assert result.exit_code == 2 and len(result.error_lines) == 1, result.stderr
    assert message in result.error_lines[0], result.stderr
    assert suite_and_cases(db, "s")[1] == []


def test_suite_rm(db: Path, cli: Cli) -> None:
    build_suite(db, cli)
    result = cli("suite", "rm", "support")
    assert result.stdout.strip() == "removed suite 'support' and its 3 cases"
    with Store.open(db) as store:
        assert store.count("eval_cases") == 0 and store.count("eval_suites") == 0
    assert cli("suite", "show", "support").error_lines == [
        "error: no suite named 'support' (there are no suites yet)"
    ]
