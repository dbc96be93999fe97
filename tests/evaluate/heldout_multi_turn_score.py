"""Score multi-turn replay on the held-out agents (a script, not a pytest test; it measures, it
diagnoses nothing).

For each held-out agent that runs in Python (``tests/fixtures/heldout/<name>``; ``openai_node``
is skipped), in its venv (``.venvs/heldout_<name>``): a three-turn conversation (``TURNS``,
each turn one ``get_weather`` call and an answer) is recorded against the fake model server its
``capture.py`` uses, scripted for those turns (through the capture's ``script()`` when it has
one: the framework's wire names). Each turn is ``tracereplay.agent_run("weather", question,
session_id="s-1")`` around a call of the agent as its capture calls it (on the question alone),
traced by the framework's own instrumentation as the capture sets it up, into a store
(``tracereplay.configure(db=...)``). Then the main venv's CLI ``promote --session s-1 --suite
weather`` and a recorded-mode ``eval weather`` (the recorded verdict); then the held-out venv's
CLI ``eval weather --agent agent:ATTR --llm recorded --concurrency 1``, once with the default
``--history recorded`` and once with ``--history replayed``, its model URL at
``http://127.0.0.1:9`` (nothing listens), ``$WEATHER_TOOL_MARKS`` set.

A framework scores 1 per pass when one case of three turns was promoted; the eval's verdict is
PASSED with its three turn rows PASSED (or, when the recording's turns failed, equals the
recorded verdict); no tool mark was written; and every turn's LLM calls were answered from the
recording (``llm_calls.source = 'recording'`` on each turn's replay run, at least one, none
other).

    .venv/bin/python tests/evaluate/heldout_multi_turn_score.py [--keep] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_replay_score import (  # noqa: E402
    AGENTS,
    HARNESS,
    HELDOUT,
    REPO,
    Agent,
    _load,
    _reason,
    _run,
    _tail,
    main_cli,
)
from weather_conversation import SCRIPT, SESSION, TURNS  # noqa: E402

HISTORIES = ["recorded", "replayed"]


@dataclass
class Conversation:
    """How a held-out agent's conversation is recorded (from its capture.py)."""

    #: the framework's own instrumentation, on ``setup.tracer_provider`` (tracereplay's)
    instrument: str
    #: ``call(question) -> answer`` (sync or async): the agent called as its capture calls it
    call: str
    #: the fake model server: ``(module file, env var of its URL)``; the harness's OpenAI one
    server: tuple[Path, str] = (HARNESS / "fake_openai.py", "OPENAI_BASE_URL")
    #: environment set before the framework is imported (as the capture sets it)
    env: dict[str, str] = field(default_factory=dict)
    #: ``agent.py`` imported before the instrumentation is switched on (as the capture does:
    #: an instrumentor that wraps the classes registered by then needs them imported)
    import_first: bool = False


CONVERSATIONS = {
    "agno": Conversation(
        instrument="""
            from openinference.instrumentation.agno import AgnoInstrumentor
            AgnoInstrumentor().instrument(tracer_provider=setup.tracer_provider)
        """,
        call="""
            def call(question):
                return agent.weather_agent.run(question).content
        """,
    ),
    "bedrock": Conversation(
        instrument="""
            from opentelemetry.instrumentation.bedrock import BedrockInstrumentor
            BedrockInstrumentor().instrument(tracer_provider=setup.tracer_provider)
        """,
        call="""
            def call(question):
                return agent.weather_agent(question)
        """,
        server=(HELDOUT / "bedrock" / "fake_bedrock.py", "BEDROCK_ENDPOINT_URL"),
    ),
    "haystack": Conversation(
        instrument="""
            from openinference.instrumentation.haystack import HaystackInstrumentor
            HaystackInstrumentor().instrument(tracer_provider=setup.tracer_provider)
        """,
        call="""
            from haystack.dataclasses import ChatMessage

            def call(question):
                result = agent.weather_agent.run(messages=[ChatMessage.from_user(question)])
                return result["last_message"].text
        """,
        import_first=True,
    ),
    "llamaindex_openllmetry": Conversation(
        instrument="""
            from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
            LlamaIndexInstrumentor().instrument(tracer_provider=setup.tracer_provider)
        """,
        call="""
            async def call(question):
                return str(await agent.weather_agent.run(user_msg=question))
        """,
    ),
    "mistral": Conversation(
        instrument="""
            from openinference.instrumentation.mistralai import MistralAIInstrumentor
            MistralAIInstrumentor().instrument(tracer_provider=setup.tracer_provider)
        """,
        call="""
            def call(question):
                return agent.weather_agent(question)
        """,
        server=(HELDOUT / "mistral" / "fake_mistral.py", "MISTRAL_SERVER_URL"),
    ),
    "semantic_kernel": Conversation(
        # Semantic Kernel's own telemetry: on by the environment, read at import, on the
        # global tracer provider (tracereplay.configure's); the prompts and completions are
        # log records, handed to the global logger provider by a LoggingHandler filtered to
        # semantic_kernel on the root logger at INFO, as the capture (the docs'
        # set_up_logging) sets it up, configure's spool in place of the OTLP log exporter
        instrument="""
            import logging
            from opentelemetry._logs import get_logger_provider
            from opentelemetry.sdk._logs import LoggingHandler

            handler = LoggingHandler(logger_provider=get_logger_provider())
            handler.addFilter(logging.Filter("semantic_kernel"))
            logging.getLogger().addHandler(handler)
            logging.getLogger().setLevel(logging.INFO)
        """,
        call="""
            async def call(question):
                response = await agent.weather_agent.get_response(messages=question)
                return str(response.content)
        """,
        env={"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"},
    ),
}

RECORD = """
import asyncio, inspect, json, sys
import tracereplay

setup = tracereplay.configure(service_name="weather-chat", db=sys.argv[1])
{import_first}
{instrument}
import agent

{call}


async def converse(questions):  # one event loop: the model's client keeps its connections
    for question in questions:
        with tracereplay.agent_run("weather", question, session_id={session!r}) as run:
            answer = await call(question)
            run.set_response(answer)
        print(json.dumps(answer))


def converse_sync(questions):
    for question in questions:
        with tracereplay.agent_run("weather", question, session_id={session!r}) as run:
            answer = call(question)
            run.set_response(answer)
        print(json.dumps(answer))


questions = json.loads(sys.argv[2])
if inspect.iscoroutinefunction(call):
    asyncio.run(converse(questions))
else:
    converse_sync(questions)
tracereplay.flush()
"""


def _script_for(agent: Agent) -> dict:
    """The conversation's script as the agent's capture converses (its ``script()``, when it
    has one, renames the tools the framework's way)."""
    capture = _load(f"heldout_{agent.name}_capture_mt", agent.folder / "capture.py")
    rename = getattr(capture, "script", None)
    return rename(SimpleNamespace(SCRIPT=SCRIPT)) if rename else SCRIPT


def _env(agent: Agent, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY", "MISTRAL_", "AWS_", "BEDROCK_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    env.update(agent.env)
    # the held-out venv has tracereplay installed from another checkout: this one's first
    env.update(PYTHONPATH=os.pathsep.join([str(REPO), str(agent.run_dir)]), **extra)
    return env


@dataclass
class Recorded:
    db: Path | None
    verdict: str | None = None
    error: str | None = None


def record(agent: Agent, work: Path) -> Recorded:
    """The conversation recorded in the agent's venv, promoted and scored in recorded mode."""
    conv = CONVERSATIONS[agent.name]
    db = work / "store.duckdb"
    marks = work / "recorded-marks.txt"
    code = RECORD.format(
        import_first="import agent" if conv.import_first else "",
        instrument=textwrap.dedent(conv.instrument),
        call=textwrap.dedent(conv.call),
        session=SESSION,
    )
    module = _load(f"heldout_mt_server_{agent.name}", conv.server[0])
    server, url = module.start(_script_for(agent))
    try:
        done = _run(
            [str(agent.venv / "bin" / "python"), "-c", code, str(db),
             json.dumps([q for q, _, _ in TURNS])],
            cwd=str(agent.run_dir),
            env=_env(agent, **conv.env, **{conv.server[1]: url}, WEATHER_TOOL_MARKS=str(marks)),
        )  # fmt: skip
        requests = len(server.model.requests)
    finally:
        server.shutdown()
    if done.returncode != 0:
        return Recorded(None, error=f"recording failed (script): {_tail(done)}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('"')]
    want = [a for _, _, a in TURNS]
    tools = marks.read_text().split() if marks.exists() else []
    if answers != want or requests != 2 * len(TURNS) or len(tools) != len(TURNS):
        return Recorded(
            None,
            error=f"recording off (script): answers {answers}, {requests} model calls, "
            f"tools {tools}",
        )
    promoted = main_cli(db, "promote", "--session", SESSION, "--suite", "weather")
    if promoted.returncode != 0:
        return Recorded(None, error=f"promote failed: {_tail(promoted)}")
    out = work / "recorded.json"
    main_cli(db, "eval", "weather", "--json", str(out))
    if not out.exists():
        return Recorded(None, error="recorded eval wrote no json")
    cases = json.loads(out.read_text())["cases"]
    turns = _case_turns(db)
    if len(cases) != 1 or turns != len(TURNS):
        return Recorded(None, error=f"{len(cases)} case(s) promoted, {turns} turn(s)")
    return Recorded(db, cases[0]["status"])


def _rows(db: Path, sql: str, params: list[Any]) -> list[dict]:
    import tracereplay.ingest  # noqa: F401  (registers the drain open_store runs)
    from tracereplay.store.open import open_store

    with open_store(db) as store:
        return store.query_dicts(sql, params)


def _case_turns(db: Path) -> int:
    """How many turns the promoted case has (0 unless exactly one case was promoted)."""
    cases = _rows(db, "SELECT turns FROM eval_cases", [])
    if len(cases) != 1:
        return 0
    turns = cases[0]["turns"]
    if isinstance(turns, str):
        turns = json.loads(turns)
    return len(turns or [])


@dataclass
class Row:
    agent: str
    history: str
    recorded: str | None
    replayed: str | None = None
    turns: list[str] = field(default_factory=list)
    marks: int = 0
    #: each turn's replay run: the sources of its LLM calls
    sources: list[list[str]] = field(default_factory=list)
    reason: str = ""

    @property
    def calls_from_recording(self) -> bool:
        return len(self.sources) == len(TURNS) and all(
            s and all(x == "recording" for x in s) for s in self.sources
        )

    @property
    def score(self) -> int:
        if self.recorded is None or self.marks or not self.calls_from_recording:
            return 0
        if len(self.turns) != len(TURNS):
            return 0
        if self.recorded == "PASSED":
            return int(self.replayed == "PASSED" and all(t == "PASSED" for t in self.turns))
        return int(self.replayed == self.recorded)

    def line(self) -> str:
        text = (
            f"{self.agent:<24} --history {self.history:<9} recorded={self.recorded} "
            f"replay={self.replayed} turns={','.join(self.turns) or '-'} marks={self.marks} "
            f"llm={'/'.join('+'.join(s) or 'none' for s in self.sources) or '-'}"
        )
        if not self.score and self.reason:
            text += f"  reason: {self.reason}"
        return text


def replay(agent: Agent, rec: Recorded, work: Path, history: str) -> Row:
    """The promoted conversation replayed offline by the held-out venv's CLI."""
    if rec.db is None:
        return Row(agent.name, history, None, reason=rec.error or "not recorded")
    db = work / f"replay-{history}.duckdb"
    for suffix in ("", ".wal"):
        src = Path(str(rec.db) + suffix)
        if src.exists():
            shutil.copyfile(src, Path(str(db) + suffix))
    marks = work / f"replay-{history}-marks.txt"
    marks.write_text("")
    out = work / f"replay-{history}.json"
    cmd = [str(agent.venv / "bin" / "tracereplay"), "--db", str(db), "eval", "weather",
           "--agent", "agent:weather_agent", "--llm", "recorded", "--concurrency", "1",
           "--history", history, "--json", str(out)]  # fmt: skip
    result = _run(cmd, cwd=str(agent.run_dir), env=_env(agent, WEATHER_TOOL_MARKS=str(marks)))
    row = Row(agent.name, history, rec.verdict)
    row.marks = len([line for line in marks.read_text().splitlines() if line])
    if not out.exists():
        row.reason = f"exit {result.returncode}, no json: {_tail(result)}"
        return row
    doc = json.loads(out.read_text())
    if len(doc["cases"]) != 1:
        row.reason = f"{len(doc['cases'])} cases"
        return row
    (case,) = doc["cases"]
    row.replayed, row.reason = case["status"], _reason(case)
    turns = _rows(
        db,
        "SELECT turn, status, reason, run_id FROM case_results WHERE eval_run_id = ?"
        " AND turn IS NOT NULL ORDER BY turn",
        [doc["eval_run"]["eval_run_id"]],
    )
    row.turns = [t["status"] for t in turns]
    for t in turns:
        if t["status"] != "PASSED" and t["reason"] and not row.reason:
            row.reason = f"turn {t['turn']}: {str(t['reason']).splitlines()[0]}"
        calls = (
            _rows(
                db,
                "SELECT source FROM llm_calls WHERE trace_id ="
                " (SELECT trace_id FROM runs WHERE run_id = ?) ORDER BY round",
                [t["run_id"]],
            )
            if t["run_id"]
            else []
        )
        row.sources.append([str(c["source"]) for c in calls])
    return row


def score_agent(agent: Agent, work: Path) -> list[Row]:
    work.mkdir(parents=True)
    rec = record(agent, work)
    return [replay(agent, rec, work, history) for history in HISTORIES]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="held-out agents (default: all Python ones)")
    parser.add_argument("--jobs", type=int, default=2, help="agents scored at once")
    parser.add_argument("--keep", action="store_true", help="keep the stores (prints where)")
    opts = parser.parse_args(argv)
    # the main venv's CLI (promote, recorded eval) runs this checkout's tracereplay
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
    )
    agents = [
        a for a in AGENTS if a.name in CONVERSATIONS and (not opts.names or a.name in opts.names)
    ]
    tmp = Path(tempfile.mkdtemp(prefix="heldout-multi-turn-"))
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(score_agent, a, tmp / a.name) for a in agents]
        rows = [row for f in futures for row in f.result()]
    for row in rows:
        print(row.line())
    print(f"score {sum(r.score for r in rows)}/{len(rows)}")
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if opts.keep:
        print(f"stores kept in {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
