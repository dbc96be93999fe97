"""The tracereplay SDK: capture live agent runs as OpenTelemetry GenAI spans.

    import tracereplay

    tracereplay.configure(service_name="weather-agent")      # spans -> ./tracereplay.duckdb

    @tracereplay.tool
    def get_weather(city: str) -> dict: ...

    with tracereplay.agent_run("weather_agent", query) as run:
        with run.llm_call(model="gpt-4o-mini", messages=messages) as llm:
            llm.set_openai_response(client.chat.completions.create(...))
        ...
        run.set_response(answer)

See docs/instrumenting.md.
"""

from tracereplay.sdk.agent_run import AgentRun, AgentRunHandle, agent_run, current_run
from tracereplay.sdk.config import (
    PROTOCOLS,
    SdkConfigError,
    TraceReplaySetup,
    configure,
    current_setup,
    flush,
    shutdown,
)
from tracereplay.sdk.content import REDACTED, ContentPolicy, truncation_marker
from tracereplay.sdk.exporter import GuardedSpanExporter, SpoolSpanExporter
from tracereplay.sdk.health import SdkStats, reset_stats, stats
from tracereplay.sdk.llm_call import LlmCall, LlmCallHandle
from tracereplay.sdk.replay_hook import (
    RUN_LIVE,
    ToolInterceptor,
    current_interceptor,
    run_attributes,
    tool_interceptor,
)
from tracereplay.sdk.tool import tool

__all__ = [
    "PROTOCOLS",
    "REDACTED",
    "RUN_LIVE",
    "AgentRun",
    "AgentRunHandle",
    "ContentPolicy",
    "GuardedSpanExporter",
    "LlmCall",
    "LlmCallHandle",
    "SdkConfigError",
    "SdkStats",
    "SpoolSpanExporter",
    "ToolInterceptor",
    "TraceReplaySetup",
    "agent_run",
    "configure",
    "current_interceptor",
    "current_run",
    "current_setup",
    "flush",
    "reset_stats",
    "run_attributes",
    "shutdown",
    "stats",
    "tool",
    "tool_interceptor",
    "truncation_marker",
]
