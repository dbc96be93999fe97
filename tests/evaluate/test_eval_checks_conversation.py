"""Conversation checks (issue 54): turnCount, toolCalledInSession and llmJudge over: conversation
judge a whole multi-turn case (``CheckSubject.transcript``) once; a one-question case is a
conversation of its one turn. The judge runs against the real HTTP server of ``FakeChat``."""

from __future__ import annotations

from typing import Any

import pytest
from eval_check_helpers import call, make_subject, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.checks.judge import render_prompt, render_transcript
from tracereplay.checks.registry import get_check_kind, is_conversation_check
from tracereplay.checks.subject import CheckSubject, TranscriptTurn
from tracereplay.models import CheckSpec, ScoreResult, Status, ToolCallRecord

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def turn(
    number: int,
    response: str,
    *calls: ToolCallRecord,
    failed: bool = False,
    query: str | None = None,
    expected: str | None = None,
) -> TranscriptTurn:
    return TranscriptTurn(
        number=number,
        query=query or f"question {number}",
        response=response,
        tool_calls=list(calls),
        failed=failed,
        expected_output=expected,
    )


def conversation(*turns: TranscriptTurn) -> CheckSubject:
    """A multi-turn case's subject: its last turn as the result, every turn as the transcript."""
    last = turns[-1]
    subject = make_subject(
        last.response, calls=list(last.tool_calls), status="failed" if last.failed else "success"
    )
    subject.transcript = list(turns)
    return subject


def paris_conversation() -> CheckSubject:
    """Three turns: weather in Paris, then Lyon, then a failed booking."""
    return conversation(
        turn(
            1,
            "Sunny, 21 C",
            call("get_weather", city="Paris", units="metric"),
            query="What is the weather in Paris?",
        ),
        turn(
            2,
            "Rain in Lyon",
            call("get_weather", city="Lyon"),
            call("search", q="Lyon"),
            query="And in Lyon?",
            expected="rain",
        ),
        turn(3, "", call("book_train", to="Lyon", error="timeout"), failed=True, query="Book it"),
    )


class TestTurnCount:
    def test_within_and_outside_the_bounds(self):
        subject = paris_conversation()
        r = run("turnCount", subject, min=2)
        assert (r.status, r.score) == (Status.PASSED, 1.0)
        assert r.explanation == "2 of 3 turns answered (turn 3 failed); at least 2 required"
        r = run("turnCount", subject, min=3)
        assert r.status is Status.FAILED and r.score == pytest.approx(2 / 3)
        assert r.explanation == "2 of 3 turns answered (turn 3 failed); at least 3 required"
        assert r.details == {
            "answered": 2,
            "turns": 3,
            "failed": [3],
            "unanswered": [],
            "min": 3,
            "max": None,
        }
        r = run("turnCount", subject, max=1)
        assert (r.status, r.score) == (Status.FAILED, 0.5)
        assert r.explanation.endswith("; at most 1 allowed")
        assert run("turnCount", subject, min=1, max=2).explanation.endswith("1 to 2 required")
        assert run("turnCount", subject, min=2, max=2).explanation.endswith("exactly 2 required")
        assert run("turnCount", subject, min=0, max=0).score == 0.0

    def test_a_blank_answer_is_no_answer(self):
        subject = conversation(
            turn(1, "hi"), turn(2, "  \n"), turn(3, "bye"), turn(4, "", failed=True)
        )
        r = run("turnCount", subject, min=4)
        assert r.status is Status.FAILED
        assert r.explanation == (
            "2 of 4 turns answered (turn 4 failed; turn 2 answered nothing); at least 4 required"
        )
        assert r.details["unanswered"] == [2]

    def test_a_one_question_case_is_one_turn(self):
        assert run("turnCount", make_subject("Sunny"), min=1, max=1).passed
        r = run("turnCount", make_subject("", status="failed"), min=1)
        assert r.status is Status.FAILED
        assert r.explanation == "0 of 1 turn answered (turn 1 failed); at least 1 required"

    @pytest.mark.parametrize(
        ("options", "fragment"),
        [
            ({}, "turnCount: give 'min', 'max' or both"),
            ({"min": 3, "max": 2}, "turnCount: 'min' (3) is greater than 'max' (2)"),
            ({"min": -1}, "option 'min'"),
            ({"max": "2"}, "option 'max'"),
            ({"minimum": 2}, "unknown option 'minimum'"),
        ],
    )
    def test_unusable_bounds_are_an_error(self, options, fragment):
        r = run("turnCount", paris_conversation(), **options)
        assert r.status is Status.ERROR and r.score is None
        assert fragment in r.explanation


class TestToolCalledInSession:
    def test_called_in_any_turn(self):
        r = run("toolCalledInSession", paris_conversation(), tool="search")
        assert (r.status, r.score) == (Status.PASSED, 1.0)
        assert r.explanation == "search called 1 time (in turn 2); at least 1 time required"
        r = run("toolCalledInSession", paris_conversation(), tool="get_weather", times=2)
        assert r.passed and r.details == {"calls": 2, "turns": [1, 2], "times": 2}
        assert r.explanation.startswith("get_weather called 2 times (in turns 1, 2)")

    def test_a_failed_turn_s_calls_count(self):
        assert run("toolCalledInSession", paris_conversation(), tool="book_train").passed

    def test_times(self):
        r = run("toolCalledInSession", paris_conversation(), tool="get_weather", times=3)
        assert r.status is Status.FAILED and r.score == pytest.approx(2 / 3)
        assert r.explanation == (
            "get_weather called 2 times (in turns 1, 2); at least 3 times required"
        )

    def test_arguments_are_a_subset(self):
        subject = paris_conversation()
        r = run("toolCalledInSession", subject, tool="get_weather", arguments={"city": "Paris"})
        assert r.passed and r.details["turns"] == [1]
        r = run(
            "toolCalledInSession",
            subject,
            tool="get_weather",
            arguments={"city": "Lyon"},
            times=2,
        )
        assert r.status is Status.FAILED and r.score == 0.5
        assert r.explanation.startswith("get_weather(city='Lyon') called 1 time (in turn 2)")

    def test_arguments_never_matched_name_the_closest_difference(self):
        r = run(
            "toolCalledInSession",
            paris_conversation(),
            tool="get_weather",
            arguments={"city": "Nice", "units": "metric"},
        )
        assert (r.status, r.score) == (Status.FAILED, 0.0)
        assert r.explanation == (
            "get_weather called 2 times (in turns 1, 2), never as "
            "get_weather(city='Nice', units='metric'): city: expected 'Nice', got 'Paris'"
        )

    def test_never_called_names_the_tools_called_instead(self):
        r = run("toolCalledInSession", paris_conversation(), tool="cancel")
        assert r.status is Status.FAILED
        assert r.explanation == (
            "cancel never called in 3 turns; called instead: [get_weather (turn 1), "
            "get_weather (turn 2), search (turn 2), book_train (turn 3)]"
        )
        r = run("toolCalledInSession", conversation(turn(1, "a"), turn(2, "b")), tool="x")
        assert r.explanation == "x never called in 2 turns; no tool was called"

    def test_a_one_question_case_is_its_own_calls(self):
        subject = make_subject("ok", calls=[call("get_weather", city="Paris")])
        assert run("toolCalledInSession", subject, tool="get_weather").passed
        r = run("toolCalledInSession", subject, tool="get_weather", times=2)
        assert r.explanation == "get_weather called 1 time (in turn 1); at least 2 times required"

    @pytest.mark.parametrize(
        ("options", "fragment"),
        [
            ({}, "missing required option 'tool'"),
            ({"tool": ""}, "option 'tool'"),
            ({"tool": "x", "times": 0}, "option 'times'"),
            ({"tool": "x", "arguments": ["city"]}, "option 'arguments'"),
            ({"tools": ["x"]}, "unknown option 'tools'"),
        ],
    )
    def test_bad_options_are_an_error(self, options, fragment):
        r = run("toolCalledInSession", paris_conversation(), **options)
        assert r.status is Status.ERROR and fragment in r.explanation

    def test_name_is_the_label_not_the_tool(self):
        r = run("toolCalledInSession", paris_conversation(), name="searched", tool="search")
        assert r.check == "searched" and r.passed


tool_names = st.sampled_from(["a", "b", "c"])
args = st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2)
turns_strategy = st.lists(
    st.tuples(
        st.text(max_size=5),
        st.booleans(),
        st.lists(st.tuples(tool_names, args), max_size=3),
    ),
    max_size=5,
)


@SETTINGS
@given(
    turns_strategy,
    tool_names,
    st.none() | args,
    st.integers(1, 4),
    st.none() | st.integers(0, 5),
    st.none() | st.integers(0, 5),
)
def test_conversation_checks_agree_with_a_count_of_the_turns(
    raw, tool, arguments, times, low, high
):
    turns = [
        turn(i + 1, text, *(call(n, **a) for n, a in calls), failed=failed)
        for i, (text, failed, calls) in enumerate(raw)
    ]
    subject = conversation(*turns) if turns else make_subject("")
    turns = subject.conversation()
    hits = sum(
        1
        for t in turns
        for tc in t.tool_calls
        if tc.tool_name == tool
        and all(tc.arguments.get(k) == v for k, v in (arguments or {}).items())
    )
    options: dict[str, Any] = {"tool": tool, "times": times}
    if arguments is not None:
        options["arguments"] = arguments
    r = run("toolCalledInSession", subject, **options)
    assert r.passed is (hits >= times) and r.score == min(hits, times) / times
    answered = sum(1 for t in turns if not t.failed and t.response.strip())
    bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    r = run("turnCount", subject, **bounds)
    if not bounds or (low is not None and high is not None and low > high):
        assert r.status is Status.ERROR
    else:
        within = (low is None or answered >= low) and (high is None or answered <= high)
        assert r.passed is within and 0.0 <= r.score <= 1.0
        assert r.explanation.startswith(f"{answered} of {len(turns)} turn")


def test_which_checks_are_conversation_checks():
    assert get_check_kind("turnCount").conversation
    assert get_check_kind("toolCalledInSession").conversation
    assert not get_check_kind("toolCalled").conversation
    assert not get_check_kind("llmJudge").conversation
    assert is_conversation_check(CheckSpec(kind="turnCount", min=1))
    assert is_conversation_check(CheckSpec(kind="toolCalledInSession", tool="x"))
    assert is_conversation_check(CheckSpec(kind="llmJudge", model="m", over="conversation"))
    assert not is_conversation_check(CheckSpec(kind="llmJudge", model="m"))
    assert not is_conversation_check(CheckSpec(kind="llmJudge", model="m", over="turn"))
    assert not is_conversation_check(CheckSpec(kind="toolCalled", tools=["x"]))


def test_a_custom_check_may_be_a_conversation_check(scratch_kinds):
    from tracereplay.evaluate import check

    @check("answeredEveryTurn", conversation=True)
    def answered_every_turn(subject: CheckSubject) -> bool:
        return all(t.response for t in subject.conversation())

    assert is_conversation_check(CheckSpec(kind="answeredEveryTurn"))
    assert not run("answeredEveryTurn", paris_conversation()).passed


@pytest.fixture
def scratch_kinds():
    """Remove the custom kinds a test registers."""
    from tracereplay.checks import registry

    registry.list_check_kinds()
    before = set(registry._REGISTRY)
    yield
    for kind in set(registry._REGISTRY) - before:
        del registry._REGISTRY[kind]
    registry.clear_prepared()


# --- llmJudge over: conversation -------------------------------------------------------------


def judge(chat, reply: str, subject: CheckSubject, **options: Any) -> ScoreResult:
    chat.replies.append((200, reply))
    return run("llmJudge", subject, model="judge-1", endpoint=chat.url, **options)


def test_render_transcript_has_every_turn_with_its_tools():
    assert render_transcript(paris_conversation().conversation()) == (
        "Turn 1, user: What is the weather in Paris?\n"
        "Turn 1, tools called:\n"
        '- get_weather({"city": "Paris", "units": "metric"})\n'
        "Turn 1, agent: Sunny, 21 C\n"
        "Turn 2, user: And in Lyon?\n"
        "Turn 2, tools called:\n"
        '- get_weather({"city": "Lyon"})\n'
        '- search({"q": "Lyon"})\n'
        "Turn 2, expected: rain\n"
        "Turn 2, agent: Rain in Lyon\n"
        "Turn 3, user: Book it\n"
        "Turn 3, tools called:\n"
        '- book_train({"to": "Lyon"}) -> error: timeout\n'
        "Turn 3, agent: (the agent failed on this turn)"
    )


def test_the_judge_gets_the_transcript_and_the_rubric(chat):
    rubric = "The agent never asks again for a city the user already named."
    r = judge(
        chat, "score: 0.8\nconsistent", paris_conversation(), over="conversation", rubric=rubric
    )
    assert (r.status, r.score) == (Status.PASSED, 0.8)
    assert r.explanation == "judge judge-1 scored 0.8 over 3 turns (>= threshold 0.5)"
    assert r.details["over"] == "conversation" and r.details["turns"] == 3
    system, user = (m["content"] for m in chat.requests[0]["body"]["messages"])
    assert "whole conversation" in system and "score: X" in system
    assert render_transcript(paris_conversation().conversation()) in user
    assert f"Criteria for the conversation as a whole:\n{rubric}" in user
    assert user.index("Turn 1, user:") < user.index("Turn 3, agent:") < user.index(rubric)


def test_without_a_rubric_the_default_criteria_are_sent(chat):
    judge(chat, "1", paris_conversation(), over="conversation")
    user = chat.requests[0]["body"]["messages"][1]["content"]
    assert "Criteria for the conversation as a whole:\nThe agent answers every question" in user


def test_a_one_question_case_is_judged_as_a_conversation_of_one_turn(chat):
    subject = make_subject("Sunny, 21 C", calls=[call("get_weather", city="Paris")])
    r = judge(chat, "score: 0.3", subject, over="conversation", rubric="Be brief.")
    assert r.status is Status.FAILED
    assert r.explanation == "judge judge-1 scored 0.3 over 1 turn (< threshold 0.5)"
    user = chat.requests[0]["body"]["messages"][1]["content"]
    assert (
        "Turn 1, user: What is the weather in Paris?\nTurn 1, tools called:\n"
        '- get_weather({"city": "Paris"})\nTurn 1, agent: Sunny, 21 C' in user
    )
    assert "Turn 2" not in user


def test_a_custom_prompt_takes_transcript_and_rubric(chat):
    prompt = "Rubric: {rubric}\n---\n{transcript}\n--- keep {braces}"
    judge(chat, "1", paris_conversation(), over="conversation", rubric="{query}", prompt=prompt)
    user = chat.requests[0]["body"]["messages"][1]["content"]
    transcript = render_transcript(paris_conversation().conversation())
    # a value is not searched for placeholders again: the rubric's {query} stays as written
    assert user == f"Rubric: {{query}}\n---\n{transcript}\n--- keep {{braces}}"


def test_over_turn_is_unchanged_and_takes_a_rubric_into_its_prompt(chat):
    subject = paris_conversation()
    judge(chat, "1", subject)
    judge(chat, "1", subject, over="turn", rubric="Temperatures in Celsius.")
    plain, graded = (req["body"]["messages"] for req in chat.requests)
    assert plain[0]["content"].startswith("You grade answers of an AI agent.")
    assert graded[0] == plain[0]
    assert graded[1]["content"] == plain[1]["content"] + (
        "\n\nCriteria to grade by:\nTemperatures in Celsius."
    )
    assert "Turn 1" not in plain[1]["content"]
    assert run("llmJudge", subject, model="m", endpoint=chat.url).explanation == (
        "judge m scored 1 (>= threshold 0.5)"
    )


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"over": "session"}, "option 'over'"),
        ({"over": "conversation", "rubric": ""}, "option 'rubric'"),
        ({"rubric": 3}, "option 'rubric'"),
    ],
)
def test_bad_over_or_rubric_is_an_error(chat, options, fragment):
    r = run("llmJudge", paris_conversation(), model="m", endpoint=chat.url, **options)
    assert r.status is Status.ERROR and fragment in r.explanation
    assert chat.requests == []


def test_render_prompt_fills_transcript_for_a_one_question_case():
    text = render_prompt("{transcript}|{rubric}", make_subject("x"))
    assert text == (
        "Turn 1, user: What is the weather in Paris?\nTurn 1, tools called: (none)\n"
        "Turn 1, agent: x|"
    )
