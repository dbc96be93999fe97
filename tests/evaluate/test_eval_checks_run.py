"""Run checks (status, budgets, JSON) and passfail (AgenticAssure semantics)."""

from __future__ import annotations

import pytest
from eval_check_helpers import call, expect, make_run, make_subject, run

from tracereplay.models import AgentResult, LlmCall, Status


class TestStatus:
    def test_success_passes(self):
        assert run("status", make_subject("ok")).passed

    @pytest.mark.parametrize("status", ["failed", "max_rounds_exceeded"])
    def test_other_statuses_fail(self, status):
        r = run("status", make_subject("", status=status))
        assert r.status is Status.FAILED and r.details["status"] == status

    def test_run_error_is_quoted(self):
        rec = make_run(AgentResult(status="failed"), error="RateLimitError: slow down")
        r = run("status", make_subject(status="failed", run=rec))
        assert r.explanation == "run status is failed: RateLimitError: slow down"


class TestBudgets:
    def test_latency_from_the_run(self):
        subject = make_subject(run=make_run(duration_ms=1500))
        assert run("maxLatencyMs", subject, limit=2000).passed
        r = run("maxLatencyMs", subject, limit=1000)
        assert r.status is Status.FAILED and r.score == pytest.approx(1000 / 1500)
        assert r.explanation == "latency 1500 ms > limit 1000 ms"

    def test_measured_duration_overrides_the_run(self):
        subject = make_subject(run=make_run(duration_ms=1500), duration_ms=100.0)
        assert run("maxLatencyMs", subject, limit=200).passed

    def test_unknown_latency_is_an_error(self):
        r = run("maxLatencyMs", make_subject(), limit=10)
        assert r.status is Status.ERROR and "duration is unknown" in r.explanation

    def test_tokens_from_run_totals(self):
        subject = make_subject(run=make_run(input_tokens=300, output_tokens=200))
        assert run("maxTokens", subject, limit=500).passed
        r = run("maxTokens", subject, limit=400)
        assert r.status is Status.FAILED and r.score == pytest.approx(0.8)
        assert run("maxTokens", subject, limit=300, tokens="input").passed
        assert not run("maxTokens", subject, limit=199, tokens="output").passed

    def test_tokens_from_llm_calls(self):
        calls = [
            LlmCall(round=1, input_tokens=100, output_tokens=10),
            LlmCall(round=2, input_tokens=150, output_tokens=None),
        ]
        subject = make_subject(run=make_run(llm_calls=calls))
        r = run("maxTokens", subject, limit=1000)
        assert r.passed and r.details["value"] == 260

    def test_tokens_unknown_is_an_error(self):
        assert run("maxTokens", make_subject(), limit=10).status is Status.ERROR
        calls = [LlmCall(round=1)]
        r = run("maxTokens", make_subject(run=make_run(llm_calls=calls)), limit=10)
        assert r.status is Status.ERROR and "no token counts" in r.explanation
        r = run("maxTokens", make_subject(run=make_run(), llm_calls=2), limit=10)
        assert r.status is Status.ERROR

    def test_tokens_explicit_on_subject(self):
        subject = make_subject(input_tokens=5, output_tokens=None)
        assert run("maxTokens", subject, limit=5).passed

    def test_rounds_and_llm_calls(self):
        subject = make_subject(rounds=3, llm_calls=4)
        assert run("maxRounds", subject, limit=3).passed
        r = run("maxRounds", subject, limit=2)
        assert r.status is Status.FAILED and r.score == pytest.approx(2 / 3)
        assert run("maxLlmCalls", subject, limit=4).passed
        r = run("maxLlmCalls", subject, limit=0)
        assert (r.status, r.score) == (Status.FAILED, 0.0)

    def test_limit_is_required(self):
        r = run("maxRounds", make_subject())
        assert r.status is Status.ERROR and "missing required option 'limit'" in r.explanation


class TestJson:
    @pytest.mark.parametrize(
        "text", ['{"a": 1}', "[1, 2]", "3", '```json\n{"a": 1}\n```', "  ```\n[]\n```  "]
    )
    def test_valid(self, text):
        assert run("jsonValid", make_subject(text)).passed

    @pytest.mark.parametrize("text", ["", "{a: 1}", 'Here: {"a": 1}', "```json\n{\n```"])
    def test_invalid(self, text):
        r = run("jsonValid", make_subject(text))
        assert r.status is Status.FAILED and r.score == 0.0

    def test_fences_kept_when_asked(self):
        assert not run(
            "jsonValid", make_subject('```json\n{"a": 1}\n```'), stripFences=False
        ).passed

    SCHEMA = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
        "required": ["city", "temp"],
    }

    def test_schema_pass(self):
        subject = make_subject('{"city": "Paris", "temp": 21.5, "extra": true}')
        assert run("jsonSchema", subject, schema=self.SCHEMA).passed

    def test_schema_violations(self):
        r = run("jsonSchema", make_subject('{"city": 3}'), schema=self.SCHEMA)
        assert r.status is Status.FAILED
        assert r.explanation.startswith("2 schema violations: ")
        assert "'temp' is a required property" in r.explanation
        assert "city: 3 is not of type 'string'" in r.explanation

    def test_schema_on_non_json_fails(self):
        r = run("jsonSchema", make_subject("sunny"), schema=self.SCHEMA)
        assert r.status is Status.FAILED and "not valid JSON" in r.explanation

    def test_invalid_schema_is_an_error(self):
        r = run("jsonSchema", make_subject("{}"), schema={"type": "objekt"})
        assert r.status is Status.ERROR and "invalid JSON schema" in r.explanation

    def test_schema_draft_and_formats(self):
        schema = {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "string",
            "format": "date",
        }
        assert run("jsonSchema", make_subject('"2024-05-01"'), schema=schema).passed
        assert not run("jsonSchema", make_subject('"yesterday"'), schema=schema).passed

    def test_schema_option_must_be_an_object(self):
        assert run("jsonSchema", make_subject("{}"), schema="object").status is Status.ERROR


class TestPassfail:
    """Same verdicts as AgenticAssure 0.4.0's PassFailScorer."""

    def test_output_only(self):
        assert run("passfail", make_subject("hi")).passed
        r = run("passfail", make_subject("  "))
        assert r.status is Status.FAILED and "agent produced empty output" in r.explanation

    def test_expected_tools_called_in_any_order_with_extras(self):
        subject = make_subject(
            "ok",
            calls=[call("b"), call("x"), call("a")],
            expected_calls=[expect("a"), expect("b")],
        )
        assert run("passfail", subject).passed
        subject = make_subject("ok", calls=[call("a")], expected_calls=[expect("a"), expect("b")])
        r = run("passfail", subject)
        assert not r.passed and "missing tool calls: b" in r.explanation

    def test_arguments_compare_against_the_first_call_only(self):
        calls = [call("get_weather", city="London"), call("get_weather", city="Paris")]
        subject = make_subject(
            "ok", calls=calls, expected_calls=[expect("get_weather", {"city": "Paris"})]
        )
        r = run("passfail", subject)
        assert not r.passed
        assert "tool 'get_weather' arg 'city': expected 'Paris', got 'London'" in r.explanation

    def test_extra_keys_fine_missing_keys_fail_values_use_equality(self):
        subject = make_subject(
            "ok",
            calls=[call("f", a=1.0, b={"x": 1, "y": 2}, extra=True)],
            expected_calls=[expect("f", {"a": 1, "b": {"x": 1, "y": 2}})],
        )
        assert run("passfail", subject).passed
        subject = make_subject(
            "ok",
            calls=[call("f", b={"x": 1, "y": 2})],
            expected_calls=[expect("f", {"a": 1, "b": {"x": 1}})],
        )
        r = run("passfail", subject)
        assert "tool 'f' missing arg 'a'" in r.explanation
        assert "tool 'f' arg 'b'" in r.explanation  # nested dicts compare with ==, not subset

    def test_expected_output_case_insensitive_substring(self):
        assert run("passfail", make_subject("It is SUNNY", expected="sunny")).passed
        r = run("passfail", make_subject("rain", expected="sunny"))
        assert not r.passed and "expected output not found in response" in r.explanation

    def test_all_failures_are_listed(self):
        subject = make_subject("", expected="x", expected_calls=[expect("t", {"a": 1})])
        r = run("passfail", subject)
        assert r.details["failures"] == [
            "agent produced empty output",
            "missing tool calls: t",
            "tool 't' was not called",
            "expected output not found in response",
        ]
