"""What a right run is for every framework capture under ``tests/fixtures/frameworks/``.

The captures all run the weather agent of ``tests/fixtures/frameworks/harness/weather.py``
against a scripted model, so the truth of each shape is known: these helpers load a payload
folder through the real decoders and converter, and check the runs against that truth.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from tracereplay.convert import convert_trace
from tracereplay.models.run import Run, ToolCallRecord
from tracereplay.otlp.files import iter_input_files, read_file
from tracereplay.spans import LogRecord, Span

#: the captures; ``make test-latest`` points it at captures made with the newest releases
FRAMEWORKS = Path(
    os.environ.get("TRACEREPLAY_FRAMEWORK_FIXTURES")
    or Path(__file__).resolve().parent.parent / "fixtures" / "frameworks"
)

_spec = importlib.util.spec_from_file_location("weather", FRAMEWORKS / "harness" / "weather.py")
assert _spec is not None and _spec.loader is not None
weather = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(weather)

QUESTIONS: dict[str, str] = weather.QUESTIONS
SCRIPT: dict[str, list[dict[str, Any]]] = weather.SCRIPT


def payload_dir(framework: str, instrumentation: str, shape: str) -> Path:
    return FRAMEWORKS / framework / "payloads" / instrumentation / shape


def load_folder(folder: Path) -> tuple[list[Span], list[LogRecord]]:
    """Every span and log record of every request file in ``folder``."""
    spans: list[Span] = []
    logs: list[LogRecord] = []
    for path in iter_input_files([folder]):
        decoded = read_file(path)
        spans.extend(decoded.spans)
        logs.extend(decoded.logs)
    return spans, logs


def convert_folder(folder: Path) -> list[Run]:
    """The runs of every trace in ``folder``, trace by trace, in start order."""
    spans, logs = load_folder(folder)
    span_groups: dict[str, list[Span]] = defaultdict(list)
    log_groups: dict[str, list[LogRecord]] = defaultdict(list)
    for span in spans:
        span_groups[span.trace_id].append(span)
    for record in logs:
        log_groups[record.trace_id].append(record)
    runs: list[Run] = []
    for trace_id, group in span_groups.items():
        runs.extend(convert_trace(group, log_groups.get(trace_id, [])))
    runs.sort(key=lambda r: r.started_at or 0)
    return runs


def runs_of(framework: str, instrumentation: str, shape: str) -> list[Run]:
    """The runs of one captured shape (``payloads/<instrumentation>/<shape>/`` of ``framework``),
    which must have been captured."""
    folder = payload_dir(framework, instrumentation, shape)
    assert any(folder.glob("*-traces.*")), f"no payload in {folder}"
    return convert_folder(folder)


def top_runs(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.parent_run_id is None]


def the_top_run(runs: list[Run]) -> Run:
    """The one top-level run of an invocation: no wrapper span (a workflow, graph, swarm or
    chain around the agent) and no agent handed over to may become a second one."""
    tops = top_runs(runs)
    assert len(tops) == 1, [(r.agent_name, r.query[:60]) for r in tops]
    return tops[0]


def sub_runs(runs: list[Run], parent: Run) -> list[Run]:
    return [r for r in runs if r.parent_run_id == parent.run_id]


def final_text(key: str) -> str:
    """The scripted final answer of the conversation started by ``key``."""
    return next(t["text"] for t in reversed(SCRIPT[key]) if "text" in t)


def scripted_calls(key: str, *, skip: tuple[str, ...] = ()) -> list[tuple[int, str, dict]]:
    """``(round, tool name, arguments)`` of every scripted tool call of a conversation."""
    out = []
    for index, turn in enumerate(SCRIPT[key], start=1):
        for name, args in turn.get("tools") or []:
            if name not in skip:
                out.append((index, name, args))
    return out


def tool_result(name: str, args: dict[str, Any]) -> str:
    """What the real tool returns for ``args`` (raises as the tool would)."""
    return getattr(weather, name)(**args)


def assert_one_line_error(call: ToolCallRecord, text: str) -> None:
    assert call.error is not None, f"{call.tool_name}: no error recorded"
    assert text in call.error, call.error
    assert "\n" not in call.error and "Traceback" not in call.error, call.error


def assert_tool_calls(
    run: Run,
    key: str,
    *,
    skip: tuple[str, ...] = (),
    rounds: bool = True,
    ids: bool = True,
) -> None:
    """The run's tool calls are the scripted ones: names, arguments, the tool's own output (or
    a one-line error), rounds and call ids."""
    expected = scripted_calls(key, skip=skip)
    got = [c for c in run.result.tool_calls if c.tool_name not in skip]
    assert [(c.tool_name, c.arguments) for c in got] == [(n, a) for _, n, a in expected], [
        (c.tool_name, c.arguments) for c in got
    ]
    for call, (round_, name, args) in zip(got, expected):
        if rounds:
            assert call.round == round_, (name, call.round, round_)
        if ids:
            assert call.tool_call_id, f"{name}: no tool_call_id"
        try:
            result = tool_result(name, args)
        except ValueError as err:
            assert_one_line_error(call, str(err))
        else:
            assert call.error is None, call.error
            assert call.result == result, (name, call.result)
    if ids:
        assert len({c.tool_call_id for c in got}) == len(got), "tool_call_ids repeat"


def assert_llm_rounds(run: Run, count: int, *, tokens: bool = True) -> None:
    """``count`` LLM calls, each with a model (and tokens)."""
    assert run.result.total_llm_calls == count, run.result.total_llm_calls
    assert len(run.llm_calls) == count
    assert run.models, "no model"
    for call in run.llm_calls:
        assert call.model, f"round {call.round}: no model"
        if tokens:
            assert call.input_tokens and call.output_tokens, f"round {call.round}: no tokens"
    if tokens:
        assert run.input_tokens > 0 and run.output_tokens > 0


def assert_plain(text: str) -> None:
    """Plain text, not a serialized message list or framework object."""
    stripped = text.strip()
    assert not stripped.startswith(("{", "[")), text[:200]
    assert not re.search(r"\b(HumanMessage|AIMessage|ToolMessage|content=)", text), text[:200]


def assert_answer_tool(run: Run, key: str, answer_tool: str) -> None:
    """The agent ended by calling its framework's answer tool (smolagents' ``final_answer``)
    with the scripted answer, in the last round: a tool call like any other, its argument also
    the run's response."""
    last = run.result.tool_calls[-1]
    assert last.tool_name == answer_tool, [c.tool_name for c in run.result.tool_calls]
    assert last.arguments == {"answer": final_text(key)}, last.arguments
    assert last.round == len(SCRIPT[key]), last.round
    assert [c.tool_name for c in run.result.tool_calls].count(answer_tool) == 1


def assert_simple_run(
    run: Run, shape: str, agent_name: str, *, tokens: bool = True, answer_tool: str | None = None
) -> None:
    """A one-agent shape (multi_round, tool_error, parallel, streaming) came out right;
    ``answer_tool``: the framework ends every run with that tool's call (not scripted)."""
    key = QUESTIONS[shape]
    if answer_tool is not None:
        assert_answer_tool(run, key, answer_tool)
    assert run.agent_name == agent_name, run.agent_name
    assert run.query == key, run.query
    assert_plain(run.query)
    assert run.result.response == final_text(key), run.result.response
    assert run.result.status == "success", (run.result.status, run.error)
    assert_llm_rounds(run, len(SCRIPT[key]), tokens=tokens)
    assert_tool_calls(run, key, skip=(answer_tool,) if answer_tool else ())
