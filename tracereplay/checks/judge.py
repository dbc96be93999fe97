"""``llmJudge``: ask a model behind any OpenAI-compatible ``/chat/completions`` endpoint to grade
the response 0..1 (``over: turn``), or the whole transcript of a multi-turn case against the
check's ``rubric`` (``over: conversation``, a conversation check).

The reply's score is parsed strictly: a bare number, ``{"score": x}``, or ``score: x`` lines that
agree. Anything else (no score, a score outside 0..1, ``8/10``, two different scores) is an
ERROR quoting the reply, never a 0.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field

from tracereplay.checks.common import clip
from tracereplay.checks.kinds import CheckError, Verdict, builtin_check
from tracereplay.checks.subject import CheckSubject, TranscriptTurn
from tracereplay.models.run import ToolCallRecord

DEFAULT_ENDPOINT = "https://api.openai.com/v1"

SYSTEM_PROMPT = (
    "You grade answers of an AI agent. Reply with a line 'score: X' where X is a number "
    "between 0 and 1 (1 = fully correct and helpful, 0 = wrong or unhelpful), optionally "
    "followed by one line explaining why."
)

DEFAULT_PROMPT = """Question given to the agent:
{query}

Reference material:
{context}

Expected answer (may be empty):
{expected}

Tools the agent called:
{tool_calls}

The agent's answer:
{output}

How well does the agent's answer satisfy the question and agree with the expected answer?"""

#: the default prompt's criteria when a check gives its own ``rubric`` (``over: turn``)
RUBRIC_SECTION = """

Criteria to grade by:
{rubric}"""

CONVERSATION_SYSTEM_PROMPT = (
    "You grade a whole conversation between a user and an AI agent. Reply with a line "
    "'score: X' where X is a number between 0 and 1 (1 = the conversation fully meets the "
    "criteria, 0 = it does not at all), optionally followed by one line explaining why."
)

#: ``over: conversation`` without a ``rubric``
DEFAULT_RUBRIC = (
    "The agent answers every question of the user correctly and helpfully, stays consistent "
    "with what was said in earlier turns, and uses what the user told it before."
)

CONVERSATION_PROMPT = """The conversation, turn by turn (with the tools the agent called in each):
{transcript}

Reference material:
{context}

Criteria for the conversation as a whole:
{rubric}

How well does the conversation as a whole meet the criteria?"""

PLACEHOLDERS = ("query", "output", "expected", "context", "tool_calls", "transcript", "rubric")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def _call_text(tc: ToolCallRecord) -> str:
    return f"{tc.tool_name}({json.dumps(tc.arguments, ensure_ascii=False, default=str)})" + (
        f" -> error: {tc.error}" if tc.error else ""
    )


def render_transcript(turns: list[TranscriptTurn]) -> str:
    """The conversation as the judge reads it: per turn ``Turn N, user: ...``, the tools the
    agent called (``Turn N, tools called:``, then each call on its own line), an expected answer
    when the turn has one (``Turn N, expected: ...``) and ``Turn N, agent: ...`` (or that the
    agent failed on it)."""
    lines: list[str] = []
    for turn in turns:
        n = turn.number
        lines.append(f"Turn {n}, user: {turn.query}")
        if turn.tool_calls:
            lines.append(f"Turn {n}, tools called:")
            lines.extend(f"- {_call_text(tc)}" for tc in turn.tool_calls)
        else:
            lines.append(f"Turn {n}, tools called: (none)")
        if turn.expected_output and turn.expected_output.strip():
            lines.append(f"Turn {n}, expected: {turn.expected_output}")
        if turn.failed:
            said = f" (it had said: {turn.response})" if turn.response.strip() else ""
            lines.append(f"Turn {n}, agent: (the agent failed on this turn){said}")
        else:
            lines.append(
                f"Turn {n}, agent: {turn.response if turn.response.strip() else '(no answer)'}"
            )
    return "\n".join(lines)


def render_prompt(template: str, subject: CheckSubject, rubric: str | None = None) -> str:
    """Fill ``{query}``, ``{output}``, ``{expected}``, ``{context}``, ``{tool_calls}``,
    ``{transcript}`` (the whole conversation, ``render_transcript``) and ``{rubric}`` (the
    check's own criteria; empty without one) in one pass: a value is not searched for
    placeholders again. Other braces are left as they are."""
    case = subject.case

    def value(key: str) -> str:
        if key == "query":
            return case.query
        if key == "output":
            return subject.output
        if key == "expected":
            return case.expected_output or ""
        if key == "context":
            return "\n\n".join(f"[{d.name}]\n{d.content}" for d in case.context) or "(none)"
        if key == "tool_calls":
            return "\n".join(f"- {_call_text(tc)}" for tc in subject.result.tool_calls) or "(none)"
        if key == "transcript":
            return render_transcript(subject.conversation())
        return rubric or ""

    cache: dict[str, str] = {}
    return _PLACEHOLDER.sub(
        lambda m: cache[m[1]] if m[1] in cache else cache.setdefault(m[1], value(m[1])), template
    )


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BARE = re.compile(rf"^\s*({_NUMBER})\.?\s*$")
_LABELLED = re.compile(
    rf"\bscore\b[\s*_\"']*[:=][\s*_\"']*({_NUMBER})(?![\d.eE+-]*\s*(?:/|%|out\s+of\b))",
    re.IGNORECASE,
)
_FENCED = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def parse_score(reply: str) -> float:
    """The 0..1 score in a judge's reply; raises ``CheckError`` quoting the reply otherwise."""
    quoted = clip(reply.strip().replace("\n", " "), 200)
    text = reply.strip()
    fenced = _FENCED.match(text)
    body = fenced.group(1).strip() if fenced else text
    found: list[float] = []
    if body.startswith("{"):
        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "score" in obj:
            value = obj["score"]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CheckError(f"judge reply has a non-numeric score: {quoted!r}")
            found.append(float(value))
    if not found:
        bare = _BARE.match(body)
        if bare:
            found.append(float(bare.group(1)))
        else:
            found.extend(float(m.group(1)) for m in _LABELLED.finditer(text))
    if not found:
        raise CheckError(f"judge reply has no score (expected 'score: <0..1>'): {quoted!r}")
    if len(set(found)) > 1:
        raise CheckError(f"judge reply gives different scores: {quoted!r}")
    score = found[0]
    if not 0.0 <= score <= 1.0:
        raise CheckError(f"judge score {score:g} is outside 0..1: {quoted!r}")
    return score


def _chat_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/chat/completions") else endpoint + "/chat/completions"


def _reply_text(payload: Any) -> str:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise CheckError(
            f"endpoint answered without choices[0].message.content: {clip(json.dumps(payload), 200)}"
        ) from None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise CheckError("endpoint answered a non-text message content")
    return content


def _usage(payload: Any, started: float) -> dict[str, Any]:
    """What a judge call cost: the ``usage`` tokens the endpoint reported (None when it did not)
    and its wall time; kept in the verdict's details so callers can record the call."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = usage if isinstance(usage, dict) else {}

    def count(*names: str) -> int | None:
        for name in names:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    return {
        "input_tokens": count("prompt_tokens", "input_tokens"),
        "output_tokens": count("completion_tokens", "output_tokens"),
        "duration_ms": round((time.perf_counter() - started) * 1000.0, 3),
    }


def call_chat(
    endpoint: str, model: str, messages: list[dict[str, str]], api_key: str | None, timeout: float
) -> str:
    """POST a chat completion request and return the reply text; failures raise ``CheckError``."""
    return chat_reply(endpoint, model, messages, api_key, timeout)[0]


def chat_reply(
    endpoint: str, model: str, messages: list[dict[str, str]], api_key: str | None, timeout: float
) -> tuple[str, dict[str, Any]]:
    """``call_chat`` with what the call cost (``_usage``): tokens and milliseconds."""
    import urllib.error  # here: http.client and email load only for a judge that is called
    import urllib.request

    started = time.perf_counter()
    url = _chat_url(endpoint)
    body = json.dumps({"model": model, "messages": messages, "temperature": 0}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = clip(exc.read().decode("utf-8", "replace").strip().replace("\n", " "), 200)
        raise CheckError(f"judge endpoint {url} answered HTTP {exc.code}: {detail}") from None
    except TimeoutError:
        raise CheckError(f"judge endpoint {url} timed out after {timeout:g}s") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise CheckError(f"judge endpoint {url} timed out after {timeout:g}s") from None
        raise CheckError(f"cannot reach judge endpoint {url}: {reason}") from None
    except OSError as exc:
        raise CheckError(f"cannot reach judge endpoint {url}: {exc}") from None
    try:
        payload = json.loads(raw)
    except ValueError:
        raise CheckError(
            f"judge endpoint {url} answered non-JSON: {clip(raw.decode('utf-8', 'replace'), 200)!r}"
        ) from None
    return _reply_text(payload), _usage(payload, started)


@builtin_check("llmJudge")
def llm_judge(
    subject: CheckSubject,
    model: Annotated[str, Field(min_length=1)],
    endpoint: str | None = None,
    prompt: str | None = None,
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
    apiKeyEnv: Annotated[
        str | None, Field(validation_alias=AliasChoices("apiKeyEnv", "api_key_env"))
    ] = None,
    timeout: Annotated[float, Field(gt=0)] = 60.0,
    over: Literal["turn", "conversation"] = "turn",
    rubric: Annotated[str, Field(min_length=1)] | None = None,
) -> Verdict:
    """An LLM grades the response 0..1 (OpenAI-compatible chat endpoint); passes at
    ``threshold``. An unparseable reply is an ERROR, never a 0.

    ``over: conversation``: a conversation check, grading the whole transcript of a multi-turn
    case once against ``rubric`` (its criteria); ``over: turn`` grades each answer, with
    ``rubric``, when given, added to the default prompt's question."""
    url = endpoint or os.environ.get("OPENAI_BASE_URL") or DEFAULT_ENDPOINT
    if apiKeyEnv:
        api_key = os.environ.get(apiKeyEnv)
        if not api_key:
            raise CheckError(f"environment variable {apiKeyEnv} (apiKeyEnv) is not set")
    else:
        api_key = os.environ.get("OPENAI_API_KEY")
    if over == "conversation":
        system = CONVERSATION_SYSTEM_PROMPT
        template = prompt or CONVERSATION_PROMPT
        rubric = rubric or DEFAULT_RUBRIC
    else:
        system = SYSTEM_PROMPT
        template = prompt or (DEFAULT_PROMPT + RUBRIC_SECTION if rubric else DEFAULT_PROMPT)
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": render_prompt(template, subject, rubric)},
    ]
    reply, usage = chat_reply(url, model, messages, api_key, timeout)
    score = parse_score(reply)
    passed = score >= threshold
    details: dict[str, Any] = {
        "reply": clip(reply, 2000),
        "model": model,
        "threshold": threshold,
        "endpoint": _chat_url(url),
        "usage": usage,
    }
    scope = ""
    if over == "conversation":
        turns = len(subject.conversation())
        details |= {"over": over, "turns": turns}
        scope = f" over {turns} turn{'s' if turns != 1 else ''}"
    return Verdict(
        passed,
        score,
        f"judge {model} scored {score:g}{scope} "
        f"({'>=' if passed else '<'} threshold {threshold:g})",
        details,
    )
