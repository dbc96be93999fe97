"""A run rendered as a readable tree for the terminal."""

from __future__ import annotations

from typing import Any

import orjson
from rich.console import Group
from rich.text import Text
from rich.tree import Tree

from tracereplay.models import LlmCall, Run, ToolCallRecord
from tracereplay.models.failure import failure_point, failure_text

_STATUS_STYLE = {"success": "green", "failed": "red", "max_rounds_exceeded": "yellow"}
MAX_VALUE_CHARS = 600


def _clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _said(messages: list[dict[str, Any]]) -> str:
    """The text parts of normalized messages, joined (the converter is imported here: every
    command imports this module, few show a run)."""
    from tracereplay.convert.messages import message_text

    return "\n".join(text for text in map(message_text, messages) if text)


def _tool_node(parent: Tree, call: ToolCallRecord, mark: Text | None = None) -> None:
    ok = call.error is None
    label = Text.assemble(
        ("tool ", "bold"),
        (call.tool_name, "bold magenta"),
        (f"  {call.duration_ms:.0f} ms", "dim"),
        ("  ok" if ok else "  error", "green" if ok else "red"),
        (f"  id={call.tool_call_id}" if call.tool_call_id else "", "dim"),
    )
    node = parent.add(label)
    if mark is not None:
        node.add(mark)
    node.add(Text.assemble(("arguments ", "dim"), _clip(_compact(call.arguments))))
    if call.result:
        node.add(Text.assemble(("result    ", "dim"), _clip(call.result)))
    if call.error is not None:
        node.add(Text.assemble(("error     ", "dim"), (_clip(call.error), "red")))


def _llm_label(call: LlmCall) -> Text:
    tokens = ""
    if call.input_tokens is not None or call.output_tokens is not None:
        tokens = f"  tokens {call.input_tokens or 0}/{call.output_tokens or 0}"
    return Text.assemble(
        (f"round {call.round} ", "bold"),
        ("llm ", "bold"),
        (call.model or "?", "blue"),
        (f"  {call.duration_ms:.0f} ms{tokens}", "dim"),
        (f"  finish={call.finish_reason}" if call.finish_reason else "", "dim"),
        (f"  answered by: {call.source}" if call.source else "", "magenta"),
    )


def fields_lines(parts: list[tuple[str, str, str]], width: int) -> list[Text]:
    """``label value`` fields packed into lines of at most ``width``, never split inside one."""
    lines: list[Text] = []
    line = Text()
    for label, value, style in parts:
        field = Text.assemble((label + " " if label else "", "dim"), (value, style))
        if line.cell_len and line.cell_len + 2 + field.cell_len > width:
            lines.append(line)
            line = Text()
        if line.cell_len:
            line.append("  ")
        line.append_text(field)
    if line.cell_len:
        lines.append(line)
    return lines


def _mark(run: Run) -> Text:
    style = "bold yellow" if run.result.status == "max_rounds_exceeded" else "bold red"
    return Text(failure_text(run), style=style)


def _fork_line(n: int) -> Text:
    return Text(
        f"── fork at LLM call {n}: the recording answered the calls above, the ones below "
        "went live ──",
        style="bold magenta",
    )


def render_run(
    run: Run,
    width: int = 80,
    fork_round: int | None = None,
    turns: list[tuple[str, str, str]] | None = None,
) -> Group:
    """Header lines plus a tree: query, rounds (LLM call and the tool calls it asked for), response.

    ``turns``: the fields of the run's place in its session (``session``, ``turn N of M``, the
    previous and next turns' ids), a header line of their own.

    When the run did not succeed, the LLM round or tool call where it stopped is marked ✗. A
    fork's replay run (``fork_round`` N, ``--llm-until``) has a line after its N-th LLM call:
    the recording answered the calls above it, the ones below went live."""
    status = run.result.status
    started = run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC") if run.started_at else "?"
    head = fields_lines(
        [
            ("run", run.run_id, "cyan"),
            ("", status, _STATUS_STYLE.get(status, "")),
            ("agent", run.agent_name or "?", ""),
            ("kind", run.kind, ""),
            ("started", started, ""),
            ("took", f"{run.duration_ms:.0f} ms", ""),
            ("llm calls", str(run.result.total_llm_calls), ""),
            ("tokens", f"{run.input_tokens}/{run.output_tokens}", ""),
            ("models", ", ".join(run.models) or "?", ""),
            ("trace", run.trace_id, ""),
            ("convention", run.convention or "?", ""),
        ],
        width,
    )
    head[0].stylize("bold", 0, 3)
    if turns:
        head += fields_lines(turns, width)
    fail_at = failure_point(run)
    tree = Tree(Text("run", style="bold"), guide_style="dim")
    tree.add(Text.assemble(("query  ", "bold"), _clip(run.query or "(none)")))
    for doc in run.context:
        tree.add(
            Text.assemble(("context ", "bold"), (doc.name, "italic"), ": ", _clip(doc.content, 200))
        )
    if run.parameters:
        tree.add(Text.assemble(("parameters ", "bold"), _compact(run.parameters)))
    by_round: dict[int, list[ToolCallRecord]] = {}
    for call in run.result.tool_calls:
        by_round.setdefault(call.round, []).append(call)

    def add_tools(node: Tree, round_no: int) -> None:
        for i, tool_call in enumerate(by_round.get(round_no, [])):
            _tool_node(node, tool_call, _mark(run) if fail_at == ("tool", round_no, i) else None)

    error_shown = False
    seen_rounds = set()
    if fork_round == 0:
        tree.add(_fork_line(0))
    for number, call in enumerate(run.llm_calls, 1):
        seen_rounds.add(call.round)
        label = _llm_label(call)
        if fork_round is not None and number > fork_round:
            label.append("  live", style="bold magenta")
        node = tree.add(label)
        if fail_at == ("llm", call.round, 0):
            node.add(_mark(run))
        said = _said(call.output_messages)
        if said:
            node.add(Text.assemble(("says ", "dim"), _clip(said, 300)))
        if fail_at == ("llm", call.round, 0) and run.error and not by_round.get(call.round):
            error_shown = True
            node.add(Text.assemble(("error ", "bold red"), (_clip(run.error), "red")))
        add_tools(node, call.round)
        if fork_round is not None and number == fork_round:
            tree.add(_fork_line(fork_round))
    for round_no, _calls in sorted(by_round.items()):
        if round_no in seen_rounds:
            continue
        node = tree.add(Text(f"round {round_no} (no LLM span recorded)", style="bold"))
        add_tools(node, round_no)
    tree.add(Text.assemble(("response ", "bold"), _clip(run.result.response or "(none)", 2000)))
    if run.error and not error_shown:
        tree.add(Text.assemble(("error ", "bold red"), (_clip(run.error), "red")))
    return Group(*head, tree)
