"""A regression the user made in their agent is FAILED, not ERROR: an exception the agent (its
code or its framework) raises in a replay whose source run did not end in it is what the agent
did. The environment failing the agent (its provider refusing to serve, no network) and
tracereplay's own refusals stay ERRORs: they say nothing about the agent."""

from __future__ import annotations

import json
import os
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import openai
import pytest
from framework_replay import FRAMEWORKS, eval_doc, framework_bin, record_suite, verdicts, weather
from replay_fixtures import CITIES, make_suite

from tracereplay.replay.answering.llm import OfflineRequestError
from tracereplay.replay.raised import environment_failure, tracereplays_own

#: the OpenAI Agents fixture agent with get_weather renamed: the recorded model answer still
#: calls get_weather, which the SDK no longer knows (its ModelBehaviorError)
RENAMED_TOOL = """
import weather
from agent import get_forecast, weather_agent as _recorded
from agents import function_tool

weather_agent = _recorded.clone(
    tools=[function_tool(weather.get_weather, name_override="get_current_weather"), get_forecast]
)
"""


@pytest.mark.slow  # runs the agent in the OpenAI Agents SDK's venv
def test_an_openai_agents_tool_renamed_fails_offline(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    record_suite(db, "openai_agents", "openinference", ["multi_round"])
    assert verdicts(eval_doc(db, tmp_path / "recorded.json")) == {
        weather.QUESTIONS["multi_round"]: "PASSED"
    }
    (tmp_path / "renamed.py").write_text(RENAMED_TOOL)
    marks = tmp_path / "tool-marks.txt"
    marks.write_text("")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    env.update(
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # nothing listens: every call is answered
        OPENAI_API_KEY="test",
        WEATHER_TOOL_MARKS=str(marks),
        PYTHONPATH=os.pathsep.join(
            [str(tmp_path), str(FRAMEWORKS / "openai_agents"), str(FRAMEWORKS / "harness")]
        ),
    )
    doc = eval_doc(
        db, tmp_path / "replay.json", "--agent", "renamed:weather_agent", "--llm", "recorded",
        "--retries", "1", cli=[str(framework_bin("openai_agents"))], cwd=str(tmp_path), env=env,
    )  # fmt: skip
    assert marks.read_text() == ""
    (case,) = doc["cases"]
    assert case["status"] == "FAILED", doc["_output"]
    assert case["reason"].startswith(
        "replay: the agent raised ModelBehaviorError: Tool get_weather not found"
    ), case["reason"]
    checks = {c["check"]: c["status"] for c in case["checks"]}
    assert checks["replay"] == "FAILED" and checks["status"] == "FAILED"
    rep = case["repetitions"][0]
    assert rep["attempts"] == 1  # a verdict: not retried
    assert rep["replay"]["llm"]["errors"] == []
    assert rep["run_id"]  # the failed run the replay made was scored and stored


# ---------------------------------------------------------------- the environment: ERROR


class _Provider(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that answers every request with one HTTP status."""

    status = 500

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"error": {"message": f"scripted {self.status}", "type": "x"}}).encode()
        self.send_response(self.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


AGENT = """
import os

import openai


def ask(query):
    client = openai.OpenAI(base_url=os.environ["PROVIDER_URL"], api_key="x", max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": query}]
    )
    return reply.choices[0].message.content
"""


@pytest.fixture
def provider() -> Iterator[tuple[type[_Provider], str]]:
    handler = type("Handler", (_Provider,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


#: the openai client's exception class for each status
OPENAI_ERRORS = {
    429: "RateLimitError",
    503: "InternalServerError",
    401: "AuthenticationError",
    400: "BadRequestError",
    404: "NotFoundError",
}


@pytest.mark.parametrize(
    ("status", "verdict"),
    [(429, "ERROR"), (503, "ERROR"), (401, "ERROR"), (400, "FAILED"), (404, "FAILED")],
)
def test_a_live_provider_that_will_not_serve_is_an_error_a_refused_request_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: tuple[type[_Provider], str],
    status: int,
    verdict: str,
) -> None:
    """Throttled, down or unauthorised: the environment (ERROR, retried). A 400 or 404 refuses
    what the agent sent (a changed model name, a malformed request): its behaviour."""
    from replay_fixtures import eval_json

    handler, url = provider
    handler.status = status
    db = tmp_path / "store.duckdb"
    make_suite(db, CITIES[:1])
    (tmp_path / "provider_agent.py").write_text(textwrap.dedent(AGENT))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROVIDER_URL", url)
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "provider_agent:ask", "--in-process", "--retries", "1"
    )
    (case,) = doc["cases"]
    assert case["status"] == verdict, case["reason"]
    assert f"the agent raised {OPENAI_ERRORS[status]}: Error code: {status}" in case["reason"]
    assert case["repetitions"][0]["attempts"] == (2 if verdict == "ERROR" else 1)


def test_what_is_the_environment_and_what_is_tracereplays() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    throttled = openai.RateLimitError(
        "slow down", response=httpx.Response(429, request=request), body=None
    )
    refused = openai.BadRequestError(
        "bad", response=httpx.Response(400, request=request), body=None
    )
    down = openai.APIConnectionError(request=request)
    assert environment_failure(throttled, live_llm=True)
    assert not environment_failure(throttled, live_llm=False)  # a recorded failure, replayed
    assert not environment_failure(refused, live_llm=True)
    assert environment_failure(down, live_llm=False)
    try:  # the agent wraps what it got: the chain says where it came from
        try:
            raise throttled
        except openai.RateLimitError as exc:
            raise RuntimeError("the weather lookup failed") from exc
    except RuntimeError as wrapped:
        assert environment_failure(wrapped, live_llm=True)
    assert not environment_failure(ValueError("prompt template is missing"), live_llm=True)
    try:
        try:
            raise OfflineRequestError("refused")
        except OfflineRequestError:
            raise KeyError("result")  # noqa: B904 - raised while handling, as agents do
    except KeyError as own:
        assert tracereplays_own(own)
    assert not tracereplays_own(ValueError("x"))


# ---------------------------------------------------------------- a plain loop: stays ERROR

#: two plain OpenAI-client loops with get_weather renamed get_current_weather (function, table
#: and schema): ``answers_itself`` tells the model "Error: no tool get_weather" when the
#: recorded answer still calls it; ``dispatches_old_name`` maps the old name to the real
#: ``weather.get_weather`` through the weather module, out of the fallback's reach
RENAMED_LOOP = """
import copy

import agent as fixture
import weather


def get_current_weather(city):
    return weather.get_weather(city)


TOOLS = {"get_current_weather": get_current_weather, "get_forecast": weather.get_forecast}
SCHEMAS = copy.deepcopy(fixture.TOOL_SCHEMAS)
SCHEMAS[0]["function"]["name"] = "get_current_weather"
OLD_NAMES = {"get_current_weather": "get_weather"}


def _complete(messages):
    response = fixture.client().chat.completions.create(
        model=fixture.MODEL, messages=messages, tools=SCHEMAS
    )
    return response.choices[0].message.model_dump(exclude_none=True)


def answers_itself(question):
    def call(name, arguments):
        if name not in TOOLS:
            return f"Error: no tool {name}"
        return fixture.run_tool(TOOLS[name], arguments)

    return fixture._loop(question, _complete, call)


def dispatches_old_name(question):
    def call(name, arguments):
        return fixture.run_tool(getattr(weather, OLD_NAMES.get(name, name)), arguments)

    return fixture._loop(question, _complete, call)
"""


@pytest.mark.slow  # two offline replays through the CLI
def test_a_plain_loop_answering_a_renamed_tool_itself_stays_an_error(tmp_path: Path) -> None:
    """The airtight check of a plain loop counts the tool results its requests carry. A loop
    that answers a call of a tool it no longer has ("Error: no tool get_weather") leaves the
    evidence of an escape (get_weather no longer offered, a result for it sent, no call of it
    answered): it stays an ERROR (an escape must never pass unnoticed). One that still runs the
    real function under that name, through another module of its code, has it answered where
    it is defined (``weather.get_weather``): nothing runs, and it replays as recorded."""
    db = tmp_path / "store.duckdb"
    record_suite(db, "plain", "openai_v2", ["multi_round"])
    (tmp_path / "renamed_loop.py").write_text(RENAMED_LOOP)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    env.update(
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        OPENAI_API_KEY="test",
        PYTHONPATH=os.pathsep.join(
            [str(tmp_path), str(FRAMEWORKS / "plain"), str(FRAMEWORKS / "harness")]
        ),
    )
    found = {}
    for attr in ("answers_itself", "dispatches_old_name"):
        marks = tmp_path / f"marks-{attr}.txt"
        marks.write_text("")
        doc = eval_doc(
            db, tmp_path / f"{attr}.json", "--agent", f"renamed_loop:{attr}", "--llm", "recorded",
            cwd=str(tmp_path), env={**env, "WEATHER_TOOL_MARKS": str(marks)},
        )  # fmt: skip
        (case,) = doc["cases"]
        found[attr] = (case["status"], case["reason"], marks.read_text().splitlines())
        if attr == "answers_itself":  # what it sent instead is in the prompt drift
            drift = case["repetitions"][0]["replay"]["llm"]["drift"]
            assert any("+result: Error: no tool get_weather" in d["diff"] for d in drift)
            assert "prompt drift: LLM call" in doc["_output"]
    error = "tool get_weather ran live during replay (no --live-tools)"
    assert found["answers_itself"] == ("ERROR", error, [])
    # the functions it dispatches to are answered in the module that defines them
    status, _, marks = found["dispatches_old_name"]
    assert (status, marks) == ("PASSED", [])


def test_an_exception_raised_by_tracereplays_code_is_its_own() -> None:
    """A fault in tracereplay's code (an adapter's TypeError) says nothing about the agent;
    the agent's exception raised through tracereplay's wrappers is the agent's."""
    from tracereplay.models.fast import build

    try:
        build(None, {})  # type: ignore[arg-type]  # raises inside tracereplay
    except Exception as exc:
        assert tracereplays_own(exc)

    def tool() -> None:
        raise ValueError("the tool's own")

    from tracereplay.sdk import tool as traced

    try:
        traced(name="t")(tool)()
    except ValueError as exc:
        assert not tracereplays_own(exc)
