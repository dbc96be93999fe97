"""llmJudge against a real OpenAI-compatible HTTP server on 127.0.0.1 (a scripted fake model)."""

from __future__ import annotations

import pytest
from eval_check_helpers import FakeChat, call, make_subject, run

from tracereplay.checks.judge import parse_score, render_prompt
from tracereplay.checks.registry import CheckError
from tracereplay.models import Document, Status


def judge(chat: FakeChat, reply, subject=None, status: int = 200, **options):
    chat.replies.append((status, reply))
    options.setdefault("model", "judge-1")
    options.setdefault("endpoint", chat.url)
    return run("llmJudge", subject or make_subject("Sunny, 21 C", expected="sunny"), **options)


def test_pass_and_request_shape(chat):
    subject = make_subject(
        "Sunny, 21 C", expected="sunny", calls=[call("get_weather", city="Paris")]
    )
    r = judge(chat, "score: 0.9\nThe answer is right.", subject)
    assert (r.status, r.score, r.passed) == (Status.PASSED, 0.9, True)
    assert r.explanation == "judge judge-1 scored 0.9 (>= threshold 0.5)"
    assert r.details["reply"].startswith("score: 0.9")
    req = chat.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] is None
    body = req["body"]
    assert body["model"] == "judge-1" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"]
    assert "What is the weather in Paris?" in user and "Sunny, 21 C" in user
    assert '- get_weather({"city": "Paris"})' in user


def test_below_threshold_fails_with_the_score(chat):
    r = judge(chat, "0.4", threshold=0.6)
    assert (r.status, r.score) == (Status.FAILED, 0.4)


@pytest.mark.parametrize(
    "reply",
    [
        "I think it is pretty good.",
        "score: 8/10",
        "Score: 85%",
        "score: 7",
        "score: -0.2",
        "score: 0.2 ... actually score: 0.9",
        "",
        '{"score": "high"}',
    ],
)
def test_unparseable_reply_is_an_error_quoting_it(chat, reply):
    r = judge(chat, reply)
    assert r.status is Status.ERROR and r.score is None and not r.passed
    if reply:
        assert repr(reply[:20])[1:-1][:10] in r.explanation


def test_custom_prompt_placeholders_and_endpoint_with_full_path(chat):
    subject = make_subject("21 C", expected="sunny")
    subject.case.context.append(Document(name="forecast", content="sunny all day"))
    r = judge(
        chat,
        '{"score": 1}',
        subject,
        endpoint=chat.url + "/chat/completions/",
        prompt="Q={query} A={output} E={expected} C={context} keep {braces}",
    )
    assert r.passed
    user = chat.requests[0]["body"]["messages"][1]["content"]
    assert user == (
        "Q=What is the weather in Paris? A=21 C E=sunny C=[forecast]\nsunny all day keep {braces}"
    )
    assert chat.requests[0]["path"] == "/v1/chat/completions"


def test_api_key_from_named_env_var(chat, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    judge(chat, "1", apiKeyEnv="JUDGE_KEY")
    assert chat.requests[0]["auth"] == "Bearer sk-test"


def test_openai_api_key_used_by_default(chat, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    judge(chat, "1")
    assert chat.requests[0]["auth"] == "Bearer sk-default"


def test_missing_named_env_var_is_an_error(chat):
    r = judge(chat, "1", api_key_env="NOPE_NOT_SET")
    assert r.status is Status.ERROR and "NOPE_NOT_SET" in r.explanation
    assert chat.requests == []


def test_endpoint_from_openai_base_url(chat, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", chat.url)
    chat.replies.append((200, "score: 0.7"))
    r = run("llmJudge", make_subject("x"), model="m")
    assert r.passed and r.score == 0.7


def test_http_error_is_an_error_with_the_body(chat):
    r = judge(chat, {"error": {"message": "invalid api key"}}, status=401)
    assert r.status is Status.ERROR
    assert "answered HTTP 401" in r.explanation and "invalid api key" in r.explanation


def test_malformed_payloads_are_errors(chat):
    r = judge(chat, b"<html>oops</html>")
    assert r.status is Status.ERROR and "non-JSON" in r.explanation
    r = judge(chat, {"choices": []})
    assert r.status is Status.ERROR and "choices[0].message.content" in r.explanation


def test_content_parts_are_joined(chat):
    parts = {"choices": [{"message": {"content": [{"type": "text", "text": "score: 0.75"}]}}]}
    assert judge(chat, parts).score == 0.75


def test_timeout_is_an_error(chat):
    r = judge(chat, "HANG", timeout=0.3)
    assert r.status is Status.ERROR and "timed out after 0.3s" in r.explanation


def test_unreachable_endpoint_is_an_error(chat):
    chat.close()
    r = run("llmJudge", make_subject("x"), model="m", endpoint=chat.url, timeout=2)
    assert r.status is Status.ERROR and "cannot reach judge endpoint" in r.explanation


def test_model_is_required():
    r = run("llmJudge", make_subject("x"))
    assert r.status is Status.ERROR and "missing required option 'model'" in r.explanation


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("1", 1.0),
        ("0", 0.0),
        (" 0.85. ", 0.85),
        (".5", 0.5),
        ("Score: 0.3", 0.3),
        ("**Score:** 0.6\nbecause ...", 0.6),
        ("reasoning first\nscore = 1.0", 1.0),
        ("score: 0.5\nfinal score: 0.5", 0.5),
        ('```json\n{"score": 0.25, "why": "x"}\n```', 0.25),
        ('{"score": 1, "reason": "ok"}', 1.0),
    ],
)
def test_parse_score_accepts_clear_scores(reply, score):
    assert parse_score(reply) == score


@pytest.mark.parametrize(
    "reply", ["score 0.5", "0.5 because", "score: 1.5", '{"score": true}', "N/A"]
)
def test_parse_score_rejects_unclear_replies(reply):
    with pytest.raises(CheckError):
        parse_score(reply)


def test_render_prompt_without_tools_or_context():
    text = render_prompt("{tool_calls}|{context}|{expected}", make_subject("x"))
    assert text == "(none)|(none)|"
