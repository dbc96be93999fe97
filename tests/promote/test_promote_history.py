"""A promoted turn keeps the conversation before its question (issue 54): the case's history,
from the turn's recorded LLM input, else from the earlier turns' questions and answers; shown
by `suite export`, editable in the suite file, read back by `suite import`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conversation import SESSION, SYSTEM, TURNS, conversation_spans, turn_run_ids
from promote_helpers import CliResult, suite_and_cases

from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.models import EvalCase
from tracereplay.promote.history import recorded_history
from tracereplay.spans import Span
from tracereplay.store import Store

Cli = Callable[..., CliResult]
PARIS = [
    {"role": "user", "content": TURNS[0][0]},
    {"role": "assistant", "content": TURNS[0][1]},
    {"role": "user", "content": TURNS[1][0]},
    {"role": "assistant", "content": TURNS[1][1]},
]


def _ingest(db: Path, spans: list[Span]) -> None:
    with Store.open(db) as store, store.transaction():
        ingest_batch(store, spans)


def _without_llm_input(spans: list[Span]) -> list[Span]:
    """The conversation recorded without the LLM calls' messages (content capture off)."""
    for span in spans:
        if span.name.startswith("chat"):
            span.attributes.pop("gen_ai.input.messages", None)
    return spans


def test_a_turn_keeps_the_recorded_conversation_before_its_question(db: Path, cli: Cli) -> None:
    _ingest(db, conversation_spans())
    first, _, third = turn_run_ids()
    result = cli("promote", third, "--suite", "chat")
    assert result.exit_code == 0, result.stderr
    assert cli("promote", first, "--suite", "chat").exit_code == 0
    _, cases = suite_and_cases(db, "chat")
    by_run = {c.source_run_id: c for c in cases}
    assert by_run[third].query == "Should I take an umbrella then?"
    # the system prompt is the agent's, not the conversation: left out
    assert by_run[third].history == PARIS
    assert by_run[first].history == []  # the first turn has nothing before it


def test_failing_the_recorded_input_the_earlier_turns_answers(db: Path, cli: Cli) -> None:
    _ingest(db, _without_llm_input(conversation_spans()))
    third = turn_run_ids()[2]
    assert cli("promote", third, "--suite", "chat").exit_code == 0
    [case] = suite_and_cases(db, "chat")[1]
    assert case.history == PARIS  # each earlier turn's question and recorded answer


def test_a_run_of_no_session_has_no_history(db: Path, cli: Cli) -> None:
    _ingest(db, conversation_spans(session=None))
    assert cli("promote", turn_run_ids()[2], "--suite", "chat").exit_code == 0
    [case] = suite_and_cases(db, "chat")[1]
    assert case.history == []


def test_promote_where_gives_each_turn_its_history(db: Path, cli: Cli) -> None:
    _ingest(db, conversation_spans())
    where = f"session_id = '{SESSION}'"
    assert cli("promote", "--where", where, "--suite", "chat").exit_code == 0
    _, cases = suite_and_cases(db, "chat")
    assert [len(c.history) for c in sorted(cases, key=lambda c: c.seq)] == [0, 2, 4]


def test_history_is_exported_edited_and_imported(db: Path, cli: Cli, tmp_path: Path) -> None:
    _ingest(db, conversation_spans())
    assert cli("promote", turn_run_ids()[2], "--suite", "chat").exit_code == 0
    out = tmp_path / "chat.yaml"
    assert cli("suite", "export", "chat", "-o", str(out)).exit_code == 0
    data = yaml.safe_load(out.read_text())
    [case] = data["cases"]
    assert case["history"] == PARIS
    # round trip into another store: the same history
    other = tmp_path / "other.duckdb"
    assert cli("suite", "import", str(out), db_path=other).exit_code == 0
    assert suite_and_cases(other, "chat")[1][0].history == PARIS
    # edited by hand: the history the user wants the agent to have had
    case["history"] = [{"role": "user", "content": "I am in Lyon."}]
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    done = cli("suite", "import", str(out))
    assert done.exit_code == 0, done.stderr
    assert suite_and_cases(db, "chat")[1][0].history == [
        {"role": "user", "content": "I am in Lyon."}
    ]
    case["history"] = [{"role": "robot", "content": "beep"}]
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    bad = cli("suite", "import", str(out))
    assert bad.exit_code != 0
    assert "role must be one of" in bad.stderr and len(bad.error_lines) == 1


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user"},
        {"role": "user", "content": "x", "name": "n"},
        {"role": "bot", "content": ""},
    ],
)
def test_a_history_message_is_a_role_and_its_content(message: dict) -> None:
    with pytest.raises(ValueError):
        EvalCase(suite_id="0" * 32, seq=0, query="q", history=[message])


def test_recorded_history_is_the_conversation_before_the_last_question() -> None:
    def m(role: str, text: str) -> dict:
        return {"role": role, "parts": [{"type": "text", "content": text}]}

    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "1", "name": "t"}]}
    messages = [m("system", SYSTEM), m("user", "a"), call, m("assistant", "b"), m("user", "c")]
    assert recorded_history(messages) == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    assert recorded_history([m("system", SYSTEM), m("user", "only")]) == []
    # an agent's own scaffolding before the question is no conversation
    assert recorded_history([m("assistant", "I will help."), m("user", "q")]) == []
