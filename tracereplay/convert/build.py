"""Assemble ``Run`` records from the run plans of one trace."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from tracereplay.convert import extract
from tracereplay.convert.content import records_no_content, unread_content
from tracereplay.convert.detect import AGENT, LLM, TOOL
from tracereplay.convert.forms import (
    is_answer_tool,
    method_span_name,
    react_answer,
    step_agent_name,
)
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import last_text, system_message
from tracereplay.convert.outcome import run_status, span_error, tool_error
from tracereplay.convert.sessions import session_id
from tracereplay.convert.tools import LlmRound, SpanCall, tool_calls
from tracereplay.convert.tree import Node, RunPlan
from tracereplay.convert.values import as_name, as_text, decoded, utc
from tracereplay.models.fast import build
from tracereplay.models.run import AgentResult, Document, LlmCall, Run
from tracereplay.semconv import (
    AGENT_SYSTEM_PROMPT,
    CASE_ID,
    EVAL_RUN_ID,
    GEN_AI_AGENT_NAME,
    INPUT_VALUE,
    RUN_CONTEXT,
    RUN_KIND,
    RUN_PARAMETERS,
)
from tracereplay.spans import LogRecord, Span

NAMESPACE = uuid.UUID("6f1d8c3e-54a2-5b7e-9c1a-7472616365a1")
"""Namespace of run ids: ``uuid5(NAMESPACE, f"{trace_id}:{root_span_id}")``."""
_NAMESPACE_BYTES = NAMESPACE.bytes


Logs = dict[str, list[LogRecord]]
_node_order = attrgetter("span.start_ns", "span.span_id")


def run_id_for(trace_id: str, root_span_id: str) -> str:
    """The stable id of the run headed by ``root_span_id`` in ``trace_id``:
    ``str(uuid.uuid5(NAMESPACE, f"{trace_id}:{root_span_id}"))``, computed without the UUID
    object."""
    name = f"{trace_id}:{root_span_id}".encode()
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _llm_info(node: Node, plan: RunPlan, logs: Logs) -> LlmInfo:
    info = extract.llm_info(node.span, node.convention, logs.get(node.span.span_id, ()))
    for inner in plan.inner_llm.get(node.span.span_id, ()):
        if (
            info.input_tokens is None
            or info.output_tokens is None
            or not info.model
            or not info.provider
            or not info.finish_reason
            or not info.input_messages
            or not info.output_messages
            or not info.source
        ):
            info.fill_from(
                extract.llm_info(inner.span, inner.convention, logs.get(inner.span.span_id, ()))
            )
    return info


def _service(span: Span) -> str:
    """The service's name, unless it is the SDK's default (``unknown_service:python``)."""
    name = span.service_name
    return "" if name.startswith("unknown_service") else name


def _attr(root: Span, key: str) -> Any:
    value = root.attributes.get(key)
    return root.resource.get(key) if value is None else value


def _documents(value: Any) -> list[Document]:
    value = decoded(value)
    if isinstance(value, (str, dict)):
        value = [value] if value else []
    if not isinstance(value, list):
        return []
    docs = []
    for item in value:
        if isinstance(item, dict):
            name = as_name(item.get("name")) or "context"
            docs.append(build(Document, {"name": name, "content": as_text(item.get("content"))}))
        elif isinstance(item, str):
            docs.append(build(Document, {"name": "context", "content": item}))
    return docs


def _parameters(value: Any) -> dict[str, Any]:
    value = decoded(value)
    return value if isinstance(value, dict) else {}


def _optional_id(value: Any) -> str | None:
    return as_name(value) or None


def _richness(r: LlmRound) -> int:
    info = r.info
    return (
        2 * bool(info.output_messages)
        + 2 * bool(info.input_messages)
        + (info.input_tokens is not None)
        + bool(info.model)
        + bool(info.finish_reason)
    )


def same_request(a: LlmRound, b: LlmRound) -> bool:
    """Whether two LLM spans of one run describe one request: an SDK's own span and an
    instrumentation's span of the same call (anthropic 2.x traces ``messages.create`` itself),
    siblings rather than nested when one of the tracers does not make its span current. Their
    times overlap over most of the shorter one, and where both recorded the question they
    recorded the same one. An agent loop sends its requests one after another, so two
    requests of one run do not overlap like that, nor hold the same number of model turns and
    tool results."""
    sa, sb = a.span, b.span
    overlap = min(sa.end_ns, sb.end_ns) - max(sa.start_ns, sb.start_ns)
    shorter = min(sa.end_ns - sa.start_ns, sb.end_ns - sb.start_ns)
    if overlap <= 0 or 2 * overlap < shorter:
        return False
    ia, ib = a.info.input_messages, b.info.input_messages
    if ia and ib and (last_text(ia, "user") != last_text(ib, "user") or _turns(ia) != _turns(ib)):
        return False
    ma, mb = a.info.model, b.info.model
    return not (ma and mb and not (ma.startswith(mb) or mb.startswith(ma)))


def _turns(messages: list[dict[str, Any]]) -> int:
    """How many model turns and tool results a request's history holds: a loop's next request
    holds more than the one before (whose spans may overlap it: OpenLIT's end late)."""
    return sum(m["role"] in ("assistant", "tool") for m in messages)


def _merged(rounds: list[LlmRound]) -> list[LlmRound]:
    """``rounds`` with the spans of one request merged (``same_request``): the richer span's
    call is kept and takes from the other what it lacks."""
    out: list[LlmRound] = []
    for r in rounds:
        if out and same_request(out[-1], r):
            kept, other = (out[-1], r) if _richness(out[-1]) >= _richness(r) else (r, out[-1])
            kept.info.fill_from(other.info)
            if other.info.model.startswith(kept.info.model):  # the dated model of an alias
                kept.info.model = other.info.model
            out[-1] = kept
        else:
            out.append(r)
    for index, r in enumerate(out, start=1):
        r.round = index
    return out


def outputs_from_history(rounds: list[LlmRound]) -> None:
    """An LLM call that recorded no output takes the model turn the next request's history
    holds right after this call's input (OpenLLMetry's openai-agents instrumentation records
    only the input of a Chat Completions call): the tool calls it asked, with their ids."""
    for r, following in zip(rounds, rounds[1:], strict=False):
        inputs, later = r.info.input_messages, following.info.input_messages
        if r.info.output_messages or not inputs or len(later) <= len(inputs):
            continue
        if [m["role"] for m in later[: len(inputs)]] != [m["role"] for m in inputs]:
            continue
        turn = []
        for message in later[len(inputs) :]:
            if message["role"] != "assistant":
                break
            turn.append(message)
        r.info.output_messages = turn


def _rounds(plan: RunPlan, logs: Logs) -> list[LlmRound]:
    """The run's LLM calls in start order, the spans of one request merged: round k is the
    k-th."""
    if len(plan.llm) < 2:
        return [
            LlmRound(1, node.span, node.convention, _llm_info(node, plan, logs))
            for node in plan.llm
        ]
    nodes = sorted(plan.llm, key=_node_order)
    rounds = _merged(
        [
            LlmRound(index, node.span, node.convention, _llm_info(node, plan, logs))
            for index, node in enumerate(nodes, start=1)
        ]
    )
    outputs_from_history(rounds)
    return rounds


def _question_index(messages: list[dict[str, Any]]) -> int | None:
    """The index of the last user message with text (the question; tool results are no
    question, whatever role a provider gives them)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "user" and any(p.get("type") == "text" for p in m["parts"]):
            return i
    return None


def _holds_tools(llm: Node, plan: RunPlan) -> bool:
    """Whether a tool span of the run is inside the LLM span: then the span covers the agent's
    loop, not one model call (its tools ran between its calls)."""
    for tool in plan.tools:
        parent = tool.span.parent_span_id
        node = tool.parent
        while node is not None:
            if node is llm:
                return True
            node = node.parent
        if parent == llm.span.span_id:
            return True
    return False


def _failed_after(span: Span, after_ns: int) -> bool:
    """Whether ``span`` records an exception raised after ``after_ns`` (the end of the last tool
    the loop ran): a model call after the tools failed (google-adk's loop span keeps its last
    successful request, and the failure only as this event)."""
    return any(e.get("name") == "exception" and _event_time(e) > after_ns for e in span.events)


def _event_time(event: dict[str, Any]) -> int:
    value = event.get("time_unix_nano")
    return value if type(value) is int else 0


def history_rounds(span: Span, convention: str, info: LlmInfo) -> list[LlmRound]:
    """The LLM calls of an agent whose only record of them is one span with the whole
    conversation, its tool spans inside (OpenInference's google-adk records ADK's agent loop as
    one ``generate_content`` span with the last request): every model turn after the question in that request's history was an
    earlier call, which asked with the history before it and answered that turn; the last call
    answered the span's output (less the tool calls already in the history, which OpenInference
    repeats there). Only the last call has the span's usage."""
    inputs = info.input_messages
    start = _question_index(inputs)
    turns = (
        [i for i in range(start + 1, len(inputs)) if inputs[i]["role"] == "assistant"]
        if start is not None
        else []
    )
    rounds: list[LlmRound] = []
    asked: set[str] = set()
    for n, i in enumerate(turns, start=1):
        earlier = LlmInfo(
            model=info.model,
            provider=info.provider,
            input_messages=inputs[:i],
            output_messages=[inputs[i]],
        )
        asked.update(p["id"] for p in inputs[i]["parts"] if p.get("type") == "tool_call")
        rounds.append(LlmRound(n, span, convention, earlier))
    if asked:
        info.output_messages = [
            {
                **m,
                "parts": [
                    p for p in m["parts"] if not (p.get("type") == "tool_call" and p["id"] in asked)
                ],
            }
            for m in info.output_messages
        ]
    rounds.append(LlmRound(len(turns) + 1, span, convention, info))
    return rounds


def _agent_system_prompt(rounds: list[LlmRound], root: Span) -> None:
    """The system prompt an agent span records (strands < 1.0: ``system_prompt``), as the
    first input message of its LLM calls that record no system message: it was sent."""
    prompt = root.attributes.get(AGENT_SYSTEM_PROMPT)
    message = system_message(prompt) if type(prompt) is str and prompt else None
    if message is None:
        return
    for r in rounds:
        inputs = r.info.input_messages
        if inputs and not any(m["role"] == "system" for m in inputs):
            r.info.input_messages = [message, *inputs]


def _llm_call(r: LlmRound) -> LlmCall:
    info, span = r.info, r.span
    return build(
        LlmCall,
        {
            "round": r.round,
            "span_id": span.span_id,
            "model": info.model,
            "provider": info.provider,
            "input_tokens": info.input_tokens,
            "output_tokens": info.output_tokens,
            "duration_ms": span.duration_ms,
            "finish_reason": info.finish_reason,
            "started_at": utc(span.start_ns),
            "input_messages": info.input_messages,
            "output_messages": info.output_messages,
            "source": info.source or None,
        },
    )


def _usage(rounds: list[LlmRound], agent: AgentInfo) -> tuple[int, int]:
    """Tokens summed over the LLM calls; the root's own totals when no call reports usage."""
    inputs = [r.info.input_tokens for r in rounds if r.info.input_tokens is not None]
    outputs = [r.info.output_tokens for r in rounds if r.info.output_tokens is not None]
    if inputs or outputs:
        return sum(inputs), sum(outputs)
    return agent.input_tokens or 0, agent.output_tokens or 0


def _span_calls(plan: RunPlan, built: dict[int, Run]) -> list[SpanCall]:
    """Tool calls seen as spans: the run's tool spans, and its sub-agents not already wrapped
    by one of them."""
    calls = []
    for node in plan.tools:
        span = node.span
        info = extract.tool_info(span, node.convention)
        calls.append(
            SpanCall(
                span.start_ns, span.span_id, info, span.duration_ms, tool_error(span, info.error)
            )
        )
    for sub in plan.sub_agents:
        sub_run = built.get(id(sub))
        if sub_run is None or sub.wrapped or sub.handoff or sub.root is None:
            continue
        info = ToolInfo(name=sub_run.agent_name, result=sub_run.result.response)
        calls.append(
            SpanCall(
                sub.root.span.start_ns,
                sub.root.span.span_id,
                info,
                sub_run.duration_ms,
                sub_run.error,
                {"input": sub_run.query} if sub_run.query else {},
            )
        )
    return calls


def _step_agent(root: Node) -> str | None:
    """The agent named by the first workflow step under ``root`` that names one
    (``forms.llama_index.step_agent_name``): the run's own name when its span is a method's
    (``FunctionAgent.run``, ``AgentWorkflow.run``). Steps under another agent, tool or
    workflow-as-tool are not looked at."""
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        name = step_agent_name(node.span.attributes.get(INPUT_VALUE))
        if name:
            return name
        if node.role in (AGENT, TOOL):
            continue
        stack.extend(reversed(node.children))
    return None


_NO_CAUSE = re.compile(r"(?:run |agent )?(?:status:? ?)?(?:error|failed|failure)\.?", re.IGNORECASE)


def _no_error_text(response: str, error: str | None) -> str:
    """A failed run's response, unless it is its error's text: a framework that returns the
    failure as the run's output (Agno's ``RunOutput.content``) gave no answer."""
    text = response.strip()
    if error and text and (text == error or error.endswith(f": {text}")):
        return ""
    return response


def _says_nothing(error: str) -> bool:
    """Whether a run's error is a bare status word, no cause (``run status: error``)."""
    return _NO_CAUSE.fullmatch(error.strip()) is not None


def _has_tool_spans(tool_span_calls: list[SpanCall]) -> bool:
    """Whether the run recorded tool spans (``tool_span_calls``: the calls ``_span_calls``
    read from them; the framework's answer tool is none): without them its tool calls are
    rebuilt from the LLM's requests."""
    return any(not is_answer_tool(call.info.name) for call in tool_span_calls)


def _answer_tool_result(plan: RunPlan) -> str | None:
    """What the run's last call of the framework's answer tool returned (its answer)."""
    for node in reversed(plan.tools):
        info = extract.tool_info(node.span, node.convention)
        if is_answer_tool(info.name) and info.result:
            return info.result
    return None


def _response(agent: AgentInfo, rounds: list[LlmRound], plan: RunPlan, failed: bool) -> str:
    """The root's answer, else the answer tool's, else the text of the last LLM output that
    has text, unless the run failed (the model's last words before a failure are no answer:
    a ReAct step's text)."""
    if agent.response:
        return agent.response
    answered = _answer_tool_result(plan) if plan.tools else None
    if answered:
        return answered
    if failed:
        return agent.raw_output or ""
    for r in reversed(rounds):
        text = last_text(r.info.output_messages)
        if text:
            return react_answer(text)
    return agent.raw_output or ""


def _final_response(
    plan: RunPlan,
    agent: AgentInfo,
    rounds: list[LlmRound],
    wrappers: list[AgentInfo],
    built: dict[int, Run],
    failed: bool = False,
) -> str:
    """The invocation's answer: a folded wrapper's, else the last handoff's (the agent that
    answered last), else the run's own."""
    for wrapper in wrappers:
        if wrapper.response:
            last = last_text(rounds[-1].info.output_messages) if rounds else ""
            if last and wrapper.response != last and wrapper.response.endswith(last):
                # a streamed invocation's output recorded as every streamed message joined
                # (OpenLIT's LangGraph workflow span): the answer is the last call's text
                return last
            return wrapper.response
    handoffs = [built.get(id(sub)) for sub in plan.sub_agents if sub.handoff]
    for sub_run in reversed([r for r in handoffs if r is not None]):
        if sub_run.result.response:
            return sub_run.result.response
    return _response(agent, rounds, plan, failed)


def build_run(plan: RunPlan, logs: Logs, built: dict[int, Run]) -> Run:
    """One run from its plan; ``built`` holds the runs of its sub-agents (built first)."""
    root_node = plan.root
    assert root_node is not None
    root = root_node.span
    trace_id = root.trace_id
    rounds = _rounds(plan, logs)
    if len(rounds) == 1 and _holds_tools(plan.llm[0], plan):
        rounds = history_rounds(rounds[0].span, rounds[0].convention, rounds[0].info)
        last_tool = max(plan.tools, key=lambda t: t.span.end_ns).span
        if span_error(last_tool) is None and _failed_after(rounds[0].span, last_tool.end_ns):
            # the request after the last tool failed: recorded only as the span's exception
            failed = LlmInfo(model=rounds[-1].info.model, provider=rounds[-1].info.provider)
            rounds.append(LlmRound(len(rounds) + 1, rounds[0].span, rounds[0].convention, failed))
    _agent_system_prompt(rounds, root)
    # what the root itself says (an LLM span heading a run has nothing more to say)
    if root_node.role == LLM:  # no agent and no span of the application's: its service's name
        agent = AgentInfo(
            name=as_name(root.attributes.get(GEN_AI_AGENT_NAME)) or _service(root) or root.name
        )
    elif root_node.role == TOOL:  # a tool that ran an agent with no span of its own
        agent = AgentInfo(name=extract.tool_info(root, root_node.convention).name)
    else:
        agent = extract.agent_info(root, root_node.convention)
    if agent.name != root.name and agent.name == method_span_name(root.name):
        agent.name = _step_agent(root_node) or agent.name
    elif plan.handoff and root_node.role != AGENT:  # a workflow step heading a handoff
        agent.name = step_agent_name(root.attributes.get(INPUT_VALUE)) or agent.name
    input_tokens, output_tokens = _usage(rounds, agent)
    models: list[str] = []
    for r in rounds:
        if r.info.model and r.info.model not in models:
            models.append(r.info.model)
    if len(models) > 1:  # a failed call records the request's alias of the dated model
        models = [m for m in models if not any(o != m and o.startswith(m) for o in models)]
    span_calls = _span_calls(plan, built)
    tool_spans = span_calls[: len(plan.tools)]  # the tool spans' calls come first
    calls = tool_calls(rounds, span_calls, rebuild=not _has_tool_spans(tool_spans))

    wrappers = [extract.agent_info(n.span, n.convention) for n in plan.folded]
    query = next((w.query for w in wrappers if w.query), None) or agent.query
    if not query and rounds:
        query = last_text(rounds[0].info.input_messages, "user")
        plan.query_guessed = True

    # status: the root's error; a run headed by an LLM span fails with its last call; a root
    # error that names no cause ("run status: error": Agno's) gives way to the failed last call
    error = span_error(root)
    if rounds and (root_node.role == LLM or (error is not None and _says_nothing(error))):
        error = span_error(rounds[-1].span) or error

    start_ns, end_ns = root.start_ns, root.end_ns
    for node in plan.folded:  # the invocation the wrappers recorded
        start_ns = min(start_ns, node.span.start_ns)
        end_ns = max(end_ns, node.span.end_ns)
    if plan.group_tops:  # the trace-level run may span several top spans
        for node in (*plan.llm, *plan.tools):
            start_ns = min(start_ns, node.span.start_ns)
            end_ns = max(end_ns, node.span.end_ns)
    parent = plan.run_parent()
    kind = _attr(root, RUN_KIND)
    return build(
        Run,
        {
            "run_id": run_id_for(trace_id, root.span_id),
            "trace_id": trace_id,
            "root_span_id": root.span_id,
            "parent_run_id": run_id_for(trace_id, parent.root.span.span_id)
            if parent is not None and parent.root is not None
            else None,
            "agent_name": agent.name,
            "service_name": root.service_name,
            "kind": "replay" if kind == "replay" else "live",
            "convention": _convention(root_node, rounds),
            "query": query or agent.raw_input or "",
            "context": _documents(root.attributes.get(RUN_CONTEXT)),
            "parameters": _parameters(root.attributes.get(RUN_PARAMETERS)),
            "models": models,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "started_at": utc(start_ns),
            "duration_ms": max(0, end_ns - start_ns) / 1e6,
            "error": error,
            "eval_run_id": _optional_id(_attr(root, EVAL_RUN_ID)),
            "case_id": _optional_id(_attr(root, CASE_ID)),
            "session_id": session_id(plan),
            "result": build(
                AgentResult,
                {
                    "response": _no_error_text(
                        _final_response(
                            plan,
                            agent,
                            rounds,
                            wrappers,
                            built,
                            run_status(root, error) == "failed",
                        ),
                        error,
                    ),
                    "tool_calls": calls,
                    "total_rounds": len(rounds),
                    "total_llm_calls": len(rounds),
                    "status": run_status(root, error),
                },
            ),
            "llm_calls": [_llm_call(r) for r in rounds],
        },
    )


def _convention(root: Node, rounds: list[LlmRound]) -> str:
    """The root's convention, else its first LLM call's."""
    if root.convention and root.role != LLM:
        return root.convention
    for r in rounds:
        if r.convention:
            return r.convention
    return root.convention


#: the scopes of instrumentation libraries (OpenTelemetry's contrib and util-genai,
#: OpenInference, OpenLLMetry, OpenLIT, Logfire): a span of any other scope came from the
#: library it traces, as an SDK's own tracer
_INSTRUMENTATION_SCOPE = re.compile(
    r"instrument|opentelemetry|openinference|openlit|traceloop|logfire", re.I
)


def _sdk_call_alone(plan: RunPlan, run: Run, parents: set[int]) -> bool:
    """Whether a run is only an SDK's own span of one request: an LLM span with no agent,
    workflow or application span around it, of a scope that is no instrumentation library's,
    recording nothing that was said. anthropic 2.x traces ``messages.create`` itself; under a
    tracer that does not make its spans current (OpenInference's LangChain tracer) that span
    starts a trace of its own, while the instrumentation's span of the same request, with the
    messages, sits in the agent's trace. Such a span is no agent run. (A content-less call of
    an instrumentation library stays a run: ``ingest`` says what records its content.)"""
    root = plan.root
    return (
        root is not None
        and root.role == LLM
        and len(plan.llm) == 1
        and id(plan) not in parents
        and bool(root.span.scope_name)
        and not _INSTRUMENTATION_SCOPE.search(root.span.scope_name)
        and not run.result.tool_calls
        and records_no_content(run)
        and not unread_content([root.span])  # content of a form not read: a gap to report
    )


def build_runs(plans: Sequence[RunPlan], logs: Logs) -> list[Run]:
    """Runs for ``plans`` (sub-agents built before the runs that call them), in plan order."""
    depth: dict[int, int] = {}
    for plan in plans:
        d, p = 0, plan.parent
        while p is not None:
            d, p = d + 1, p.parent
        depth[id(plan)] = d
    built: dict[int, Run] = {}
    for plan in sorted(plans, key=lambda p: -depth[id(p)]):
        built[id(plan)] = build_run(plan, logs, built)
    if any(p.root is not None and p.root.role == LLM for p in plans):
        parents = {id(p.parent) for p in plans if p.parent is not None}
        plans = [p for p in plans if not _sdk_call_alone(p, built[id(p)], parents)]
    # a handoff carries on the conversation: its question is the one the invocation was asked
    # (its own first LLM input may end with the framework's note about the handoff)
    for plan in sorted(plans, key=lambda p: depth[id(p)]):
        parent = built.get(id(plan.parent)) if plan.parent is not None else None
        if plan.handoff and plan.query_guessed and parent is not None and parent.query:
            built[id(plan)].query = parent.query
    return [built[id(plan)] for plan in plans]
