"""The Vercel AI SDK's own telemetry of a TypeScript agent converts to the right runs.

The payloads under ``tests/fixtures/frameworks/vercel_ai/payloads/ai-sdk/`` were captured by
``tests/fixtures/frameworks/vercel_ai/capture.py`` (``ai`` 6.0.333, ``@ai-sdk/openai`` 3.0.141,
Node 20; its README says what each span holds). The shared shapes are in
``test_framework_shapes.py``; this file holds what is the SDK's own:

- everything said is in ``ai.*`` attributes (the request spans' ``gen_ai.*`` hold model and
  usage only), so before ``convert/ai_sdk.py`` the runs came out empty and "recorded without
  content";
- ``streamText`` runs the tools inside the request span that asked for them;
- the two parallel tool spans start in the same millisecond: the model's order is kept;
- provider and finish reason are the SDK's own words (``openai.responses``, ``tool-calls``).
"""

from __future__ import annotations

from framework_helpers import QUESTIONS, runs_of, the_top_run

from tracereplay.convert.content import records_no_content


def test_every_run_is_read_from_the_ai_attributes() -> None:
    run = the_top_run(runs_of("vercel_ai", "ai-sdk", "multi_round"))
    assert run.convention == "ai_sdk"
    assert not records_no_content(run)
    assert [c.provider for c in run.llm_calls] == ["openai"] * 3
    assert [c.finish_reason for c in run.llm_calls] == ["tool_calls", "tool_calls", "stop"]
    assert run.query == QUESTIONS["multi_round"]


def test_streamed_tools_inside_the_request_span_are_tool_calls() -> None:
    run = the_top_run(runs_of("vercel_ai", "ai-sdk", "streaming"))
    assert [(c.round, c.tool_name, c.result) for c in run.result.tool_calls] == [
        (1, "get_weather", "Lisbon: 21°C, sunny"),
        (2, "get_forecast", "Lisbon next 3 day(s): rain likely"),
    ]
    assert all(c.duration_ms > 0 for c in run.result.tool_calls)


def test_parallel_tools_that_start_together_keep_the_models_order() -> None:
    run = the_top_run(runs_of("vercel_ai", "ai-sdk", "parallel"))
    assert [c.arguments["city"] for c in run.result.tool_calls] == ["Rome", "Oslo"]
