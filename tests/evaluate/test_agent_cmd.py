"""``tracereplay eval SUITE --agent-cmd COMMAND``: an agent in any language replayed as a command.

Two real agents, captured against the scripted fake model, promoted and replayed offline
(``--llm recorded``) as commands: the plain OpenAI-client loop traced by the contrib openai-v2
instrumentation (``plain/command_agent.py``, in ``.venvs/plain_openai_v2``; also with no
telemetry at all) and the Vercel AI SDK agent with its own telemetry (``vercel_ai/agent.mjs``,
on Node). Their tools run for real (the harness's marks say so) and their results are compared
with the recording; a changed system prompt is caught under ``--llm-match strict``. Commands
that fail, time out or misuse the options are judged by the one verdict rule, with no
traceback. Real processes, real loopback servers, real OpenTelemetry exporters.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from evaluate.framework_replay import (
    FRAMEWORKS,
    _cli,
    _harness_module,
    eval_doc,
    fake_model,  # noqa: F401 - the fixture
    fake_openai,
    framework_bin,
    node_modules,
    rows,
    weather,
)

otlp_sink = _harness_module("otlp_sink")
PLAIN = FRAMEWORKS / "plain"
VERCEL = FRAMEWORKS / "vercel_ai"
SHAPES = ["multi_round", "tool_error", "parallel"]
CHANGED_PROMPT = "You are a pirate: answer in pirate speech."


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without OpenTelemetry, OpenAI or tracereplay settings."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    env.update(extra)
    return env


def _promote(db: Path, *folders: Path) -> None:
    ingested = _cli(db, "ingest", *map(str, folders))
    assert ingested.exit_code == 0, ingested.output
    promoted = _cli(
        db, "promote", "--where", "kind = 'live' AND parent_run_id IS NULL", "--suite", "weather"
    )
    assert promoted.exit_code == 0, promoted.output


def _replay(db: Path, tmp: Path, command: str, *args: str, **env: str) -> tuple[dict, list[str]]:
    """``eval weather --agent-cmd COMMAND ARGS``: the JSON document and the tools that ran."""
    marks = tmp / "marks.txt"
    marks.write_text("")
    out = tmp / f"replay-{len(list(tmp.glob('replay-*.json')))}.json"
    doc = eval_doc(
        db,
        out,
        "--agent-cmd",
        command,
        *args,
        env=_clean_env(WEATHER_TOOL_MARKS=str(marks), **env),
    )
    return doc, [line for line in marks.read_text().splitlines() if line]


def _statuses(doc: dict) -> list[str]:
    return [c["status"] for c in doc["cases"]]


def _replay_runs(db: Path, doc: dict) -> list[dict]:
    """The stored runs the cases scored: replay runs of this eval run and case."""
    eval_run_id = doc["eval_run"]["eval_run_id"]
    found = []
    for case in doc["cases"]:
        run_id = case["repetitions"][0]["run_id"]
        assert run_id, case
        (run,) = rows(
            db,
            "SELECT kind, eval_run_id, case_id, total_llm_calls, service_name FROM runs "
            "WHERE run_id = ?",
            [run_id],
        )
        assert (run["kind"], run["eval_run_id"], run["case_id"]) == (
            "replay",
            eval_run_id,
            case["case_id"],
        )
        sources = rows(db, "SELECT source FROM llm_calls WHERE run_id = ? ORDER BY round", [run_id])
        assert sources and all(s["source"] == "recording" for s in sources), sources
        found.append(run)
    return found


def _offline_passes(db: Path, tmp: Path, command: str, expected_tools: set[str]) -> dict:
    """The command replayed offline: every case PASSED, its tools really ran, their results
    as recorded."""
    doc, marks = _replay(db, tmp, command, "--llm", "recorded")
    assert _statuses(doc) == ["PASSED"] * len(SHAPES), doc["_output"]
    assert set(marks) == expected_tools, marks  # a command's tools run as it runs them
    for case in doc["cases"]:
        report = case["repetitions"][0]["replay"]
        assert report["llm"]["answered"] == report["llm"]["recorded"] > 0, report
        assert report["llm"]["drift"] == [] and report["llm"]["errors"] == [], report
        assert report["tools_live"] == report["tool_results_compared"] > 0, report
        assert report["tool_result_drift"] == [], report
    _replay_runs(db, doc)
    return doc


def _changed_prompt_caught(db: Path, tmp: Path, command: str) -> None:
    """A changed system prompt: every case an ERROR under --llm-match strict, naming the
    drift; reported but answered under the default order match."""
    doc, _ = _replay(
        db,
        tmp,
        command,
        "--llm",
        "recorded",
        "--llm-match",
        "strict",
        WEATHER_SYSTEM_PROMPT=CHANGED_PROMPT,
    )
    assert _statuses(doc) == ["ERROR"] * len(SHAPES), doc["_output"]
    for case in doc["cases"]:
        assert "LLM call 1" in case["reason"], case["reason"]
        drift = case["repetitions"][0]["replay"]["llm"]["drift"]
        assert drift and "messages" in drift[0]["fields"], drift
    assert "Traceback" not in doc["_output"]
    doc, _ = _replay(db, tmp, command, "--llm", "recorded", WEATHER_SYSTEM_PROMPT=CHANGED_PROMPT)
    for case in doc["cases"]:
        drift = case["repetitions"][0]["replay"]["llm"]["drift"]
        assert drift and drift[0]["round"] == 1, case


# ---------------------------------------------------------------------- Python, as a command
def _capture_python(tmp: Path, python: Path, base_url: str, *args: str) -> Path:
    """The plain loop as a command, captured: each shape's question on stdin, its spans to the
    harness's OTLP sink (the files ``tracereplay ingest`` reads)."""
    out = tmp / "captured"
    sink, endpoint = otlp_sink.start(out)
    try:
        for shape in SHAPES:
            done = subprocess.run(
                [str(python), str(PLAIN / "command_agent.py"), *args],
                input=weather.QUESTIONS[shape],
                capture_output=True,
                text=True,
                timeout=120,
                env=_clean_env(
                    OPENAI_BASE_URL=base_url,
                    OPENAI_API_KEY="test",
                    OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                    WEATHER_TOOL_MARKS=os.devnull,
                ),
            )
            assert done.returncode == 0, done.stderr
    finally:
        sink.shutdown()
    return out


def test_python_agent_command_replays_offline(tmp_path: Path, fake_model: str) -> None:  # noqa: F811
    python = framework_bin("plain_openai_v2", "python")
    db = tmp_path / "store.duckdb"
    _promote(db, _capture_python(tmp_path, python, fake_model))
    command = f"{python} {PLAIN / 'command_agent.py'}"
    tools = {"get_weather(Paris)", "get_forecast(Paris, 2)", "get_weather(Atlantis)"}
    tools |= {"get_weather(Rome)", "get_weather(Oslo)"}
    _offline_passes(db, tmp_path, command, tools)
    _changed_prompt_caught(db, tmp_path, command)


def test_python_agent_without_telemetry_gets_a_run(tmp_path: Path, fake_model: str) -> None:  # noqa: F811
    """No OpenTelemetry in the command at all: its run is built from the calls the model
    server answered (rounds, the tool calls the model asked, the results sent back)."""
    python = framework_bin("plain_openai_v2", "python")
    db = tmp_path / "store.duckdb"
    _promote(db, _capture_python(tmp_path, python, fake_model))
    command = f"{python} {PLAIN / 'command_agent.py'} --no-telemetry"
    doc = _offline_passes(
        db,
        tmp_path,
        command,
        {
            "get_weather(Paris)",
            "get_forecast(Paris, 2)",
            "get_weather(Atlantis)",
            "get_weather(Rome)",
            "get_weather(Oslo)",
        },
    )
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]
    calls = multi["repetitions"][0]["tool_calls"]
    assert [(c["tool_name"], c["round"]) for c in calls] == [
        ("get_weather", 1),
        ("get_forecast", 2),
    ]
    assert calls[0]["result"] == "Paris: 18°C, cloudy"
    runs = _replay_runs(db, doc)
    assert sorted(r["total_llm_calls"] for r in runs) == [2, 2, 3]
    assert {r["service_name"] for r in runs} == {"weather-agent"}  # the source runs' service
    # a tool whose result changed: its drift is reported, as --live-tools reports it, and the
    # LLM call whose request carries the changed result is where the run stops being comparable
    doc, _ = _replay(db, tmp_path, command, "--llm", "recorded", WEATHER_PARIS="30°C, sunny")
    multi = next(c for c in doc["cases"] if c["query"] == weather.QUESTIONS["multi_round"])
    report = multi["repetitions"][0]["replay"]
    (drift,) = report["tool_result_drift"]
    assert (drift["tool"], drift["round"]) == ("get_weather", 1)
    assert (drift["recorded_result"], drift["live_result"]) == (
        "Paris: 18°C, cloudy",
        "Paris: 30°C, sunny",
    )
    assert report["diverged_at"] == 2
    assert "2 tool call(s) ran for real: 1 result(s) as recorded, 1 differ" in doc["_output"]
    # by the one verdict rule the case FAILED: its tool answered otherwise than recorded
    assert multi["status"] == "FAILED", multi["reason"]
    assert "tool result changed: get_weather(" in multi["reason"]


def test_python_agent_sending_its_messages_as_log_events(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    """Messages as OTLP log events (older GenAI instrumentations): the eval receives them, the
    run is converted with them, and they are stored with the replay trace (the stored run has
    the tool calls the events name)."""
    python = framework_bin("plain_openai_v2", "python")
    db = tmp_path / "store.duckdb"
    _promote(db, _capture_python(tmp_path, python, fake_model, "--events"))
    command = f"{python} {PLAIN / 'command_agent.py'} --events"
    doc, marks = _replay(db, tmp_path, command, "--llm", "recorded", "--llm-match", "strict")
    assert _statuses(doc) == ["PASSED"] * len(SHAPES), doc["_output"]
    assert len(marks) == 5, marks
    for case in doc["cases"]:
        run_id = case["repetitions"][0]["run_id"]
        (stored,) = rows(db, "SELECT tool_calls_count FROM runs WHERE run_id = ?", [run_id])
        assert stored["tool_calls_count"] == len(case["repetitions"][0]["tool_calls"]) > 0


# ---------------------------------------------------------------------- TypeScript (Vercel AI SDK)
def test_vercel_ai_agent_command_replays_offline(tmp_path: Path) -> None:
    node_modules(VERCEL)
    db = tmp_path / "store.duckdb"
    _promote(db, *(VERCEL / "payloads" / "ai-sdk" / shape for shape in SHAPES))
    # the three shapes run one generateText call; the question comes on standard input
    command = f"node --import {VERCEL / 'instrumentation.mjs'} {VERCEL / 'agent.mjs'} multi_round"
    tools = {"get_weather(Paris)", "get_forecast(Paris, 2)", "get_weather(Atlantis)"}
    tools |= {"get_weather(Rome)", "get_weather(Oslo)"}
    doc = _offline_passes(db, tmp_path, command, tools)
    # the SDK's own agent run (ai.generateText) is the replay run, as it was the recorded one
    names = {r["agent_name"] for r in rows(db, "SELECT agent_name FROM runs WHERE kind = 'replay'")}
    assert names == {"weather_agent"}, names
    assert all(c["repetitions"][0]["response"] for c in doc["cases"])
    _changed_prompt_caught(db, tmp_path, command)


def test_vercel_ai_streaming_agent_replays_offline(tmp_path: Path) -> None:
    """streamText against the recording served as server-sent events: the full stream read,
    its tools run, the case PASSED as recorded."""
    node_modules(VERCEL)
    db = tmp_path / "store.duckdb"
    _promote(db, VERCEL / "payloads" / "ai-sdk" / "streaming")
    command = f"node --import {VERCEL / 'instrumentation.mjs'} {VERCEL / 'agent.mjs'} streaming"
    doc, marks = _replay(db, tmp_path, command, "--llm", "recorded")
    assert _statuses(doc) == ["PASSED"], doc["_output"]
    [case] = doc["cases"]
    report = case["repetitions"][0]["replay"]
    assert report["llm"]["answered"] == report["llm"]["recorded"] > 0, report
    assert report["tools_live"] == len(marks) == 2 and report["tool_result_drift"] == [], report
    assert case["repetitions"][0]["response"]


# ---------------------------------------------------------------------- the verdict rule
@pytest.fixture
def recorded_db(tmp_path: Path) -> Path:
    """A suite of the Vercel captures (no node needed: they are only ingested)."""
    db = tmp_path / "store.duckdb"
    _promote(db, VERCEL / "payloads" / "ai-sdk" / "multi_round")
    return db


def _python_command(code: str, *args: str) -> str:
    return shlex.join([sys.executable, "-c", code, *args]).replace("'{query}'", "{query}")


def test_query_reaches_the_command_three_ways(recorded_db: Path, tmp_path: Path) -> None:
    """On stdin, as ``{query}`` and as ``$TRACEREPLAY_QUERY``; the answer is stdout, stripped.
    Without telemetry or LLM calls the run is the wrapper's: scored by the suite's checks."""
    code = (
        "import os, sys; q = sys.stdin.read(); "
        "assert q == os.environ['TRACEREPLAY_QUERY'] == sys.argv[1], (q, sys.argv); "
        "print('  said: ' + q + '  ')"
    )
    doc, _ = _replay(recorded_db, tmp_path, _python_command(code, "{query}"))
    (case,) = doc["cases"]
    assert case["repetitions"][0]["response"] == f"said: {weather.QUESTIONS['multi_round']}"
    assert case["status"] == "FAILED"  # no tool calls, not the recorded answer: checks fail
    assert {c["check"] for c in case["checks"] if not c["passed"]} >= {"containsExpected"}


def test_failing_command_is_failed_with_its_stderr_tail(recorded_db: Path, tmp_path: Path) -> None:
    code = (
        'import sys; sys.stderr.write(\'Traceback (most recent call last):\\n  File "a.py", '
        "line 1\\nValueError: the agent broke\\n'); sys.exit(3)"
    )
    doc, _ = _replay(recorded_db, tmp_path, _python_command(code))
    (case,) = doc["cases"]
    assert case["status"] == "FAILED"
    reason = case["reason"]
    assert "the agent command exited with status 3: ValueError: the agent broke" in reason
    assert "File" not in reason and "Traceback" not in reason


def test_command_past_timeout_is_an_error(recorded_db: Path, tmp_path: Path) -> None:
    doc, _ = _replay(
        recorded_db, tmp_path, _python_command("import time; time.sleep(60)"), "--timeout", "1"
    )
    (case,) = doc["cases"]
    assert case["status"] == "ERROR"
    assert case["reason"] == "the agent command timed out after 1s"


def test_command_that_does_not_start_is_an_error(recorded_db: Path, tmp_path: Path) -> None:
    doc, _ = _replay(recorded_db, tmp_path, str(tmp_path / "no-such-agent"))
    (case,) = doc["cases"]
    assert case["status"] == "ERROR"
    assert "could not start: FileNotFoundError" in case["reason"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "m:a"], "--agent-cmd and --agent are mutually exclusive"),
        (["--tool-match", "fifo"], "--agent-call, --tool-match and --in-process apply to --agent"),
        (["--in-process"], "--agent-call, --tool-match and --in-process apply to --agent"),
    ],
)
def test_option_misuse_is_one_line(recorded_db: Path, args: list[str], message: str) -> None:
    result = _cli(recorded_db, "eval", "weather", "--agent-cmd", "node agent.mjs", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_unsplittable_command_is_one_line(recorded_db: Path) -> None:
    result = _cli(recorded_db, "eval", "weather", "--agent-cmd", "node 'agent.mjs")
    assert result.exit_code == 2, result.output
    assert "--agent-cmd: cannot split" in result.output


def test_replay_one_run_with_a_command(recorded_db: Path, tmp_path: Path) -> None:
    """``tracereplay replay RUN --agent-cmd``: the run replayed as a case of ``replay:NAME``."""
    (run,) = rows(recorded_db, "SELECT run_id FROM runs WHERE kind = 'live'")
    out = tmp_path / "one.json"
    code = "import sys; sys.stdin.read(); sys.exit('the agent gave up')"
    result = _cli(
        recorded_db, "replay", run["run_id"][:8], "--agent-cmd", _python_command(code),
        "--json", str(out),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    (case,) = json.loads(out.read_text())["cases"]
    assert case["status"] == "FAILED"
    assert "replay: the agent command exited with status 1: the agent gave up" in case["reason"]
    neither = _cli(recorded_db, "replay", run["run_id"][:8])
    assert neither.exit_code == 2
    assert "replay needs the agent: --agent MODULE:ATTR or --agent-cmd COMMAND" in neither.output


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat[0] != "Z"


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_an_interrupted_eval_ends_its_commands(
    recorded_db: Path, tmp_path: Path, how: signal.Signals
) -> None:
    """The commands run in sessions of their own (a timeout kills the group): an eval ended
    by Ctrl-C or ``kill`` ends them too, and keeps its eval run as interrupted."""
    pids = tmp_path / "pids.txt"
    code = f"import os, time; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); time.sleep(60)"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(recorded_db), "eval", "weather",
         "--agent-cmd", _python_command(code), "--timeout", "120"],
        env=_clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    (pid,) = map(int, pids.read_text().split())
    assert _alive(pid)
    proc.send_signal(how)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert b"Traceback" not in err, err
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    (run,) = rows(recorded_db, "SELECT status FROM eval_runs WHERE mode = 'replay'")
    assert run["status"] == "interrupted"


def test_a_fork_sends_the_later_calls_to_the_commands_own_model(tmp_path: Path) -> None:
    """``--llm-until 1``: the first LLM call answered from the recording, the later ones sent
    to the model the command's environment names (its ``OPENAI_BASE_URL``)."""
    python = framework_bin("plain_openai_v2", "python")
    db = tmp_path / "store.duckdb"
    fake, url = fake_openai.start(weather.SCRIPT)
    try:
        _promote(db, _capture_python(tmp_path, python, url))
    finally:
        fake.shutdown()
    live, live_url = fake_openai.start(weather.SCRIPT, first_id=100)  # call ids not seen before
    try:
        command = f"{python} {PLAIN / 'command_agent.py'} --no-telemetry"
        doc, marks = _replay(
            db, tmp_path, command, "--llm", "recorded", "--llm-until", "1",
            OPENAI_BASE_URL=live_url, OPENAI_API_KEY="the-users-key",
        )  # fmt: skip
    finally:
        live.shutdown()
    assert _statuses(doc) == ["PASSED"] * len(SHAPES), doc["_output"]
    # every case's later calls reached the live model
    assert len(live.model.requests) == 1 + 1 + 2  # tool_error, parallel, multi_round
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["fork_round"] == 1 and llm["answered"] == 1, llm


def test_the_stderr_tail_is_the_message_not_the_traceback() -> None:
    """Node's uncaught error and Python's traceback give their message, no frame."""
    from tracereplay.replay.command.process import Finished

    node = (
        "file:///app/agent.mjs:42\n    if (!(city in WEATHER)) throw new Error(`unknown city`);\n"
        "                                  ^\n\nError: unknown city: Atlantis\n"
        "    at Object.execute (file:///app/agent.mjs:42:35)\n    at async run (node:x:1:1)\n\n"
        "Node.js v20.20.2\n"
    )
    python = (
        'Traceback (most recent call last):\n  File "agent.py", line 3, in <module>\n'
        "    main()\nValueError: unknown city: Atlantis\n"
    )
    tail = Finished(1, "", node, 1.0).stderr_tail()
    assert tail == "Error: unknown city: Atlantis"
    tail = Finished(1, "", python, 1.0).stderr_tail()
    assert tail == "ValueError: unknown city: Atlantis"
    assert Finished(1, "", "x" * 1000, 1.0).stderr_tail() == "..." + "x" * 300
