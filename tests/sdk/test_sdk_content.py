"""Content capture, the redact hook and the per-value size cap."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sdk_helpers import Recorded

import tracereplay
from tracereplay.sdk import REDACTED, SdkConfigError, stats, truncation_marker
from tracereplay.sdk.content import ContentPolicy, compile_redactor, valid_text

SECRET = re.compile(r"sk-[A-Za-z0-9]{8,}")


@tracereplay.tool
def charge(card: str, note: str = "") -> str:
    if card == "bad":
        raise ValueError(f"card {note} declined")
    return f"charged {card}; {note}"


def run_everything() -> None:
    with tracereplay.agent_run(
        "pay",
        "use key sk-ABCDEFGH12",
        context="doc with sk-ABCDEFGH12",
        parameters={"k": "sk-ABCDEFGH12"},
    ) as run:
        with run.llm_call(
            model="m", messages=[{"role": "user", "content": "sk-ABCDEFGH12"}]
        ) as llm:
            llm.set_output("reply sk-ABCDEFGH12")
        charge("4111", note="sk-ABCDEFGH12")
        with pytest.raises(ValueError):
            charge("bad", note="sk-ABCDEFGH12")
        run.set_response("done with sk-ABCDEFGH12")


def all_text(recorded: Recorded) -> str:
    out = []
    for span in recorded.spans():
        out.extend(str(v) for v in span.attributes.values())
        out.append(span.status.description or "")
        for event in span.events:
            out.extend(str(v) for v in event.attributes.values())
    return "\n".join(out)


@pytest.mark.parametrize(
    "redact",
    [[r"sk-[A-Za-z0-9]{8,}"], [SECRET], lambda s: SECRET.sub(REDACTED, s)],
    ids=["regex-strings", "compiled", "callable"],
)
def test_redact_runs_on_every_recorded_string(configure_memory: Any, redact: Any) -> None:
    recorded = configure_memory(redact=redact)
    run_everything()
    text = all_text(recorded)
    assert "sk-ABCDEFGH12" not in text
    assert text.count(REDACTED) >= 9
    tool = recorded.named("execute_tool charge")[0]  # JSON stays valid after redaction
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {
        "card": "4111",
        "note": REDACTED,
    }


def test_a_failing_redact_hook_records_the_marker_not_the_value(configure_memory: Any) -> None:
    def hook(text: str) -> str:
        raise RuntimeError("hook bug")

    recorded = configure_memory(redact=hook)
    run_everything()  # the agent is not affected
    assert "sk-ABCDEFGH12" not in all_text(recorded)
    assert stats().instrumentation_errors > 0


def test_capture_content_off_records_structure_only(configure_memory: Any) -> None:
    recorded = configure_memory(capture_content=False)
    run_everything()
    agent = recorded.one("invoke_agent pay")
    assert "sk-ABCDEFGH12" not in "".join(
        str(v)
        for s in recorded.spans()
        for k, v in s.attributes.items()
        if k != "tracereplay.run.parameters"
    )
    # parameters are configuration, not content: kept (redact applies to them)
    assert json.loads(agent.attributes["tracereplay.run.parameters"]) == {"k": "sk-ABCDEFGH12"}
    assert "gen_ai.input.messages" not in agent.attributes
    assert "tracereplay.run.context" not in agent.attributes
    assert agent.attributes["gen_ai.agent.name"] == "pay"
    tools = recorded.named("execute_tool charge")
    assert [t.attributes["gen_ai.tool.name"] for t in tools] == ["charge", "charge"]
    assert all("gen_ai.tool.call.arguments" not in t.attributes for t in tools)
    assert tuple(recorded.one("chat m").attributes["gen_ai.response.finish_reasons"]) == ("stop",)


def test_size_cap_truncates_each_value_visibly(configure_memory: Any) -> None:
    recorded = configure_memory(max_value_chars=50)
    with tracereplay.agent_run("a", "q" * 120, context=["d" * 80]) as run:
        charge("c" * 60, note="short")
        run.set_response("r" * 51)
    agent = recorded.one("invoke_agent a")
    query = json.loads(agent.attributes["gen_ai.input.messages"])[0]["parts"][0]["content"]
    assert query == "q" * 50 + truncation_marker(70)
    doc = json.loads(agent.attributes["tracereplay.run.context"])[0]["content"]
    assert doc == "d" * 50 + truncation_marker(30)
    tool = recorded.one("execute_tool charge")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {
        "card": "c" * 50 + truncation_marker(10),
        "note": "short",
    }
    assert tool.attributes["gen_ai.tool.call.result"].endswith(truncation_marker(25))


def test_bad_options_are_one_line_errors() -> None:
    with pytest.raises(SdkConfigError, match="redact"):
        tracereplay.configure(redact=["(unclosed"])
    with pytest.raises(SdkConfigError, match="max_value_chars"):
        tracereplay.configure(max_value_chars=0)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@given(value=json_values, cap=st.integers(min_value=1, max_value=12))
def test_policy_json_stays_valid_and_capped(value: Any, cap: int) -> None:
    policy = ContentPolicy(max_value_chars=cap, redact=compile_redactor([r"x+"]))
    out = json.loads(policy.json(value))
    for s in _strings(out):
        assert "x" not in s
        body, _, _ = s.partition("…[truncated ")
        assert len(body) <= cap
    assert _strings(out) == [policy.text(s) for s in _strings(value)]


_any_text = st.text(st.characters(blacklist_categories=()), max_size=12)  # surrogates included


@given(_any_text)
def test_valid_text_replaces_each_lone_surrogate_and_keeps_the_rest(text: str) -> None:
    out = valid_text(text)
    out.encode("utf-8")  # what every encoding and the store need
    assert len(out) == len(text)
    for before, after in zip(text, out):
        assert after == ("\ufffd" if "\ud800" <= before <= "\udfff" else before)


def test_json_with_a_lone_surrogate_is_the_value_not_its_repr() -> None:
    broken = json.loads('"sunny \\ud83d"')  # an escaped half of a pair, as an API may send it
    text = ContentPolicy().json({"forecast": broken, "n": 2**70})  # 2**70: the tolerant encoder
    assert json.loads(text) == {"forecast": "sunny \ufffd", "n": 2**70}
    assert json.loads(ContentPolicy().json([broken])) == ["sunny \ufffd"]
    assert ContentPolicy().text(broken) == "sunny \ufffd"
