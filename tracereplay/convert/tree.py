"""The span tree of one trace, cut into runs.

Rules:
- Framework wrappers are folded into the agents they hold (``fold_wrappers``), agent spans
  whose parent link was lost are placed by time (``_adopt_by_time``), and so are spans whose
  parent was never exported (``_adopt_orphans``); the messages an agent runtime delivered for
  a team go under the send that started the team (``adopt_deliveries``).
- Every agent span (``invoke_agent``, OpenInference AGENT, Traceloop ``agent``) heads a run, and
  so does a workflow span inside a run headed by a workflow span of the same name (the agent's
  entry point called again for another agent: Haystack's ``Agent.run``). An
  agent inside another run is a run of its own (``parent_run_id``) and a tool call of its parent,
  unless a tool span of the parent already wraps it.
- LLM spans under no agent belong to their outermost workflow span (``invoke_workflow``,
  OpenInference CHAIN, Traceloop ``workflow``), else to one run headed by the trace's top span
  (the earliest top span when the tree is broken). Such a run exists only if it has an LLM call.
- An LLM span inside another LLM span is the same call seen by two instrumentations: only the
  outer one counts; the inner ones fill what the outer one lacks.
- A run whose steps name the agents they ran for (LlamaIndex's ``AgentWorkflow``) is cut into
  one run per agent, the later ones handoffs (``split_step_agents``).
- Only the outermost tool span counts, inside an LLM span too (a streamed model call runs
  the tools it asks for before its span ends); LLM spans inside a tool span belong to the tool, unless
  a workflow span inside the tool holds them (a graph or chain run as a tool): that workflow is
  a sub-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from tracereplay.convert.detect import (
    AGENT,
    LLM,
    TOOL,
    WORKFLOW,
    detect,
    is_runtime_send,
    runtime_key,
)
from tracereplay.convert.forms import step_agent_name
from tracereplay.semconv import GEN_AI_AGENT_ID, GEN_AI_AGENT_NAME, INPUT_VALUE, LLM_SOURCE
from tracereplay.spans import Span


class Node:
    """A span with its role, convention and place in the tree."""

    __slots__ = ("span", "role", "convention", "parent", "children", "seen", "runs_agent")

    def __init__(self, span: Span, role: int, convention: str) -> None:
        self.span = span
        self.role = role
        self.convention = convention
        self.parent: Node | None = None
        self.children: list[Node] = []
        self.seen = False
        #: a tool span that ran an agent whose own span is missing (only its graph's nodes)
        self.runs_agent = False


@dataclass(slots=True, eq=False)
class RunPlan:
    """The spans that make up one run, before anything is extracted from them."""

    root: Node | None
    parent: RunPlan | None = None
    llm: list[Node] = field(default_factory=list)
    inner_llm: dict[str, list[Node]] = field(default_factory=dict)
    tools: list[Node] = field(default_factory=list)
    sub_agents: list[RunPlan] = field(default_factory=list)
    wrapped: bool = False  # a tool span of the parent run wraps this agent
    is_agent: bool = False
    group_tops: list[Node] = field(default_factory=list)
    #: the parent run handed the conversation over to this one (it is no tool call of it)
    handoff: bool = False
    #: framework wrappers folded into this run, outermost first (see ``fold_wrappers``)
    folded: list[Node] = field(default_factory=list)
    #: set while building: the run's question came from its LLM messages, not its own span
    query_guessed: bool = False

    @property
    def materialized(self) -> bool:
        return self.is_agent or bool(self.llm)

    def run_parent(self) -> RunPlan | None:
        """The nearest enclosing plan that is a run."""
        plan = self.parent
        while plan is not None and not plan.materialized:
            plan = plan.parent
        return plan


_order = attrgetter("start_ns", "span_id")
#: ``_order`` of a node's span, of a plan's root span
_node_order = attrgetter("span.start_ns", "span.span_id")
_root_order = attrgetter("root.span.start_ns", "root.span.span_id")


def build_nodes(spans: list[Span]) -> tuple[list[Node], list[Node]]:
    """All nodes (in start order, duplicates by span id dropped) and the top nodes."""
    by_id: dict[str, Node] = {}
    nodes = []
    for span in sorted(spans, key=_order):
        if span.span_id not in by_id:
            node = by_id[span.span_id] = Node(span, *detect(span))
            nodes.append(node)
    tops = []
    get = by_id.get
    agents = tools = 0
    for node in nodes:
        agents += node.role == AGENT
        tools += node.role == TOOL
        parent = get(node.span.parent_span_id)
        if parent is None or parent is node:
            tops.append(node)
        else:
            node.parent = parent
            parent.children.append(node)
    if agents:
        adopt_deliveries(nodes, tops)
        _adopt_orphans(tops)
        _adopt_by_time(nodes, tops, tools > 0)
        _adopt_replay_calls(nodes, tops)
        _graph_nodes_are_steps(nodes)
    return nodes, tops


def _graph_nodes_are_steps(nodes: list[Node]) -> None:
    """An agent span that is a node of the agent's own graph is a step of that agent's run, not
    an agent run: inside another agent's run with no tool span between them (a sub-agent is
    called through a tool, a handoff from a workflow), and named as its id
    (``gen_ai.agent.id`` = ``gen_ai.agent.name``: a node id such as ``model``, where an agent's
    own id is unique), or one of several agent spans of the same name under that agent (one per
    turn of its loop). OpenLIT's LangGraph instrumentation traces each node run as
    ``invoke_agent model``: one run per invocation, never per graph node. So is an agent span
    with no work of its own (no child span) that runs within the time of a sibling agent span:
    the node's work was recorded under the agent (OpenLIT's LangChain spans)."""
    for node in nodes:
        if node.role != AGENT:
            continue
        siblings = node.parent.children if node.parent is not None else ()
        if not node.children and any(
            other is not node and other.role == AGENT and _within(node.span, other.span)
            for other in siblings
        ):
            node.role = WORKFLOW  # a node span beside the agent whose turn it records
            continue
        holder, seen = node.parent, {id(node)}
        # parent links may loop here (they are broken later, in plan_trace): a loop ends the walk
        while holder is not None and holder.role not in (AGENT, TOOL) and id(holder) not in seen:
            seen.add(id(holder))
            holder = holder.parent
        if holder is not None and id(holder) in seen:
            holder = None
        a = node.span.attributes
        name = a.get(GEN_AI_AGENT_NAME)
        if holder is not None and holder.role == TOOL:
            if name is not None and a.get(GEN_AI_AGENT_ID) == name:
                # the tool ran an agent graph that left only its node spans: the tool's span
                # heads the agent's run (OpenLIT's LangGraph, an agent wrapped in a @tool)
                node.role = WORKFLOW
                holder.runs_agent = True
            continue
        if holder is None or holder.role != AGENT:
            continue
        repeated = (
            sum(
                1
                for other in (node.parent.children if node.parent is not None else ())
                if other.role == AGENT and other.span.name == node.span.name
            )
            > 1
        )
        if (name is not None and a.get(GEN_AI_AGENT_ID) == name) or repeated:
            node.role = WORKFLOW


def adopt_deliveries(nodes: list[Node], tops: list[Node]) -> None:
    """An agent runtime's ``send`` (``detect.is_runtime_send``: AutoGen's, as a team's run
    starts) adopts the later runtime spans beside it that deliver to the same key (the team's
    id): the runtime delivers each message of the team's exchange from its own task, so their
    spans hang off the span that was current when the runtime started (the application's), not
    off the send that caused them. Under the send (a workflow), the team's agents are one
    invocation: the first agent's run, the later speakers its handoffs (``fold_wrappers``)."""
    for node in nodes:
        if node.role != WORKFLOW or not is_runtime_send(node.span):
            continue
        key = runtime_key(node.span)
        siblings = node.parent.children if node.parent is not None else tops
        for other in list(siblings):
            if (
                other is not node
                and other.span.start_ns >= node.span.start_ns
                and runtime_key(other.span) == key
            ):
                _move(other, node, tops)


def _adopt_orphans(tops: list[Node]) -> None:
    """A top span whose parent was never exported (its parent id names no span of the trace: a
    framework that did not end the span around a failure, strands 0.2's event-loop cycle) and
    that runs within a top agent span's time moves under that agent (the latest to start, when
    several hold it): its LLM call or tool call was the agent's."""
    agents = [n for n in tops if n.role == AGENT]
    if not agents:
        return
    for node in [n for n in tops if n.role != AGENT and n.span.parent_span_id]:
        holders = [a for a in agents if _within(node.span, a.span)]
        if holders:
            _move(node, max(holders, key=_node_order), tops)


def _within(inner: Span, outer: Span) -> bool:
    return outer.start_ns <= inner.start_ns and inner.end_ns <= outer.end_ns


def _move(node: Node, parent: Node, tops: list[Node]) -> None:
    siblings = node.parent.children if node.parent is not None else tops
    siblings.remove(node)
    node.parent = parent
    parent.children.append(node)
    parent.children.sort(key=_node_order)


def _ancestors(node: Node) -> set[int]:
    out = set()
    parent = node.parent
    while parent is not None and id(parent) not in out:
        out.add(id(parent))
        parent = parent.parent
    return out


def _adopt_replay_calls(nodes: list[Node], tops: list[Node]) -> None:
    """A replay's own span of an LLM call (``tracereplay.llm.source``, written by the HTTP layer
    under whatever span is current there) moves under the span that records the same call, or
    under the agent that made it, when the framework does not make its spans current where it
    sends its requests (strands, OpenInference's LangChain tracer): under the latest-starting
    LLM span of its parent's subtree (or of a tree whose parent span never arrived: strands
    0.2 loses a cycle's span when the model fails) that holds it in time; else under the LLM span just before
    it among its siblings, nothing but other spans between them (LlamaIndex's ``astream_chat``
    ends when it hands over the stream, before the request is sent); else under the
    latest-starting agent span of the subtree that holds it. Nested so, the two spans of one
    call are one call (``build._llm_info``)."""
    noted = [n for n in nodes if n.role == LLM and LLM_SOURCE in n.span.attributes]
    for node in noted:
        if node.parent is None or node.parent.role == LLM:
            continue
        best: dict[int, Node] = {}
        for other in nodes:
            if (
                other.role not in (LLM, AGENT)
                or other is node.parent
                or not _within(node.span, other.span)
                or LLM_SOURCE in other.span.attributes
            ):
                continue
            lineage = _ancestors(other)
            if id(node) in lineage or (id(node.parent) not in lineage and not _orphaned(other)):
                continue
            held = best.get(other.role)
            if held is None or other.span.start_ns >= held.span.start_ns:
                best[other.role] = other
        target = best.get(LLM) or _call_before(node) or best.get(AGENT)
        if target is not None:
            _move(node, target, tops)


def _orphaned(node: Node) -> bool:
    """Whether ``node``'s tree hangs from a parent span the trace does not hold."""
    top, seen = node, {id(node)}
    while top.parent is not None and id(top.parent) not in seen:
        top = top.parent
        seen.add(id(top))
    if top.parent is not None:  # parent links that loop: no parent span is missing
        return False
    return bool(top.span.parent_span_id) and top.span.parent_span_id != top.span.span_id


def _call_before(node: Node) -> Node | None:
    """The instrumentation's LLM span of the call ``node`` (a replay's span of it) records, when
    it ended before the request went out: the sibling LLM span just before it, with no tool,
    agent or other LLM call between them, that holds no replay span yet."""
    assert node.parent is not None
    for other in reversed(node.parent.children):
        if other is node or other.span.start_ns > node.span.start_ns:
            continue
        if other.role in (TOOL, AGENT) or LLM_SOURCE in other.span.attributes:
            return None
        if other.role == LLM:
            taken = any(LLM_SOURCE in c.span.attributes for c in other.children)
            return None if taken else other
    return None


def _adopt_by_time(nodes: list[Node], tops: list[Node], has_tools: bool) -> None:
    """Mend agent spans whose instrumentation lost the parent link, using time alone:

    - an agent span with no children of its own adopts the sibling spans that run within its
      time (its work recorded next to it, not under it);
    - an agent span that runs within a tool span of another branch, under one of that tool
      span's ancestors, moves under the tool span (an agent called as a tool, whose span was
      parented to the workflow instead).
    """
    for node in nodes:
        if node.role != AGENT:
            continue
        if not node.children:
            siblings = node.parent.children if node.parent is not None else tops
            for other in [s for s in siblings if s is not node and _within(s.span, node.span)]:
                if other.span.start_ns >= node.span.start_ns:
                    _move(other, node, tops)
        if not has_tools or node.parent is None or node.parent.role == TOOL:
            continue
        best: Node | None = None
        for tool in nodes:
            if tool.role != TOOL or not _within(node.span, tool.span):
                continue
            lineage = _ancestors(tool)
            if (
                id(node.parent) in lineage
                and id(node) not in lineage
                and (best is None or tool.span.start_ns >= best.span.start_ns)
            ):
                best = tool
        if best is not None:
            _move(node, best, tops)


def plan_runs(spans: list[Span]) -> list[RunPlan]:
    """The runs of one trace (only those that are runs), ordered by root start."""
    return plan_trace(spans).runs


@dataclass(slots=True, eq=False)
class TracePlan:
    """``plan_runs`` with everything it made: ``runs`` (its result), and the nodes and plans
    that link to each other (a node to its parent and children, a plan to its parent and
    sub-runs), for ``release``."""

    runs: list[RunPlan]
    nodes: list[Node]
    plans: list[RunPlan]

    def release(self) -> None:
        """Cut the links between the trace's nodes and plans, once its runs are built.

        They are reference cycles: without this, the trace's nodes, plans and spans outlive
        the conversion until the cyclic collector finds them, and ingest runs the converter
        with the collector paused (``gcpause``), so the first collection after a batch had to
        traverse every span of the batch, where the spans alone are freed as their batch
        dies."""
        for node in self.nodes:
            node.parent = None
            node.children = []
        for plan in self.plans:
            plan.parent = None
            plan.sub_agents = []


def plan_trace(spans: list[Span]) -> TracePlan:
    """The runs of one trace (``plan_runs``) with the nodes and plans made for them."""
    nodes, tops = build_nodes(spans)
    group = RunPlan(root=None)
    plans: list[RunPlan] = []
    seen = 0
    pending = tops
    while True:
        for top in pending:
            seen += _walk(top, group, plans)
        if seen == len(nodes):
            break
        # parent links that loop never reach a top: start again from the earliest unseen
        pending = [next(n for n in nodes if not n.seen)]
        pending[0].parent = None
    made = [group, *plans]
    if group.llm:
        group.root = min(group.group_tops, key=_node_order)
        plans.append(group)
    plans = fold_wrappers(plans)
    plans = split_step_agents(plans)
    made.extend(p for p in plans if p.handoff and p not in made)
    out = [p for p in plans if p.materialized]
    out.sort(key=_root_order)
    return TracePlan(out, nodes, made)


def _is_wrapper(plan: RunPlan) -> bool:
    """An agent or workflow span with no LLM or tool call of its own around agents; not one
    whose sub-runs are all its handoffs (the first agent of a folded wrapper, which records no
    LLM call when the framework's spans have none)."""
    return (
        plan.root is not None
        and plan.root.role in (AGENT, WORKFLOW)
        and not plan.llm
        and not plan.tools
        and bool(plan.sub_agents)
        and not all(sub.handoff for sub in plan.sub_agents)
    )


def fold_wrappers(plans: list[RunPlan]) -> list[RunPlan]:
    """Fold framework wrappers into the agent runs they hold.

    A wrapper is an agent or workflow span with no LLM call and no tool call of its own around
    one or more agents (the OpenAI Agents SDK's workflow span, a LangGraph graph node around an
    agent graph, a strands swarm, an ADK workflow). It is not a run: its first agent takes its
    place (and its question and answer, see ``RunPlan.folded``), and the agents after the first
    are handoffs, sub-runs of the first.
    """
    removed: set[int] = set()
    changed = True
    while changed:
        changed = False
        for plan in plans:
            if id(plan) in removed or not _is_wrapper(plan):
                continue
            subs = sorted(plan.sub_agents, key=_root_order)
            first, rest = subs[0], subs[1:]
            first.parent = plan.parent
            first.wrapped = plan.wrapped
            first.handoff = plan.handoff
            first.folded = [*plan.folded, plan.root, *first.folded]  # type: ignore[list-item]
            if plan.parent is not None:
                siblings = plan.parent.sub_agents
                siblings[siblings.index(plan)] = first
            for sub in rest:
                sub.parent = first
                sub.handoff = True
                first.sub_agents.append(sub)
            removed.add(id(plan))
            changed = True
    return [p for p in plans if id(p) not in removed]


def _step_segments(root: Node) -> list[tuple[str, Node, set[int]]]:
    """The root's steps cut where the agent they ran for changes: ``(agent, first step, ids of
    the steps)`` in order. A step names its agent in its input (``step_agent_name``); a step
    that names none belongs to the agent before it."""
    segments: list[tuple[str, Node, set[int]]] = []
    for child in sorted(root.children, key=_node_order):
        name = step_agent_name(child.span.attributes.get(INPUT_VALUE))
        if name and (not segments or segments[-1][0] != name):
            segments.append((name, child, set()))
        if segments:
            segments[-1][2].add(id(child))
    return segments


def _step_of(node: Node, root: Node) -> Node | None:
    """The root's child that ``node`` is in (``node`` itself when it is one)."""
    while node.parent is not None and node.parent is not root:
        node = node.parent
    return node if node.parent is root else None


def split_step_agents(plans: list[RunPlan]) -> list[RunPlan]:
    """Cut a run whose steps ran for several agents into one run per agent: a multi-agent
    workflow that records no span per agent, only the agent each step ran for (LlamaIndex's
    ``AgentWorkflow``: ``current_agent_name`` in each step's event). The first agent keeps the
    run; each later one is a handoff, a sub-run headed by its first step, with the LLM and tool
    calls of its steps."""
    out = list(plans)
    for plan in plans:
        root = plan.root
        if root is None or root.role not in (AGENT, WORKFLOW) or not (plan.llm or plan.tools):
            continue
        segments = _step_segments(root)
        if len(segments) < 2:
            continue
        owner: dict[int, RunPlan] = {}
        for _, step, ids in segments[1:]:
            sub = RunPlan(root=step, parent=plan, is_agent=True, handoff=True)
            sub.inner_llm = plan.inner_llm
            plan.sub_agents.append(sub)
            out.append(sub)
            for i in ids:
                owner[i] = sub
        for kind in ("llm", "tools"):
            kept = []
            for node in getattr(plan, kind):
                step = _step_of(node, root)
                target = owner.get(id(step)) if step is not None else None
                (getattr(target, kind) if target is not None else kept).append(node)
            setattr(plan, kind, kept)
    return out


def _walk(top: Node, group: RunPlan, plans: list[RunPlan]) -> int:
    """Assign the spans under ``top`` to runs; returns how many nodes it saw."""
    # context: (node, run, counted LLM ancestor, counted tool ancestor)
    stack: list[tuple[Node, RunPlan, Node | None, Node | None]] = [(top, group, None, None)]
    count = 0
    while stack:
        node, run, llm, tool = stack.pop()
        if node.seen:
            continue
        node.seen = True
        count += 1
        role = node.role
        if role == AGENT:
            sub = RunPlan(root=node, parent=run, is_agent=True, wrapped=tool is not None)
            plans.append(sub)
            run.sub_agents.append(sub)
            run, llm, tool = sub, None, None
        elif role == WORKFLOW and run is group:
            run, llm, tool = RunPlan(root=node), None, None
            plans.append(run)
        elif (
            role == WORKFLOW
            and llm is None
            and run.root is not None
            and run.root.span.name == node.span.name
            and run.root.role == WORKFLOW
        ):
            # the run's own entry point called again inside it (Haystack's ``Agent.run`` of
            # an agent a tool function runs, with no span of the tool): a sub-agent
            sub = RunPlan(root=node, parent=run, is_agent=True, wrapped=tool is not None)
            plans.append(sub)
            run.sub_agents.append(sub)
            run, llm, tool = sub, None, None
        elif role == WORKFLOW and tool is not None and llm is None:
            # a graph or chain a tool runs: its LLM calls make it a sub-run of its own
            sub = RunPlan(root=node, parent=run, wrapped=True)
            plans.append(sub)
            run.sub_agents.append(sub)
            run, llm, tool = sub, None, None
        elif role == LLM:
            if llm is not None:
                run.inner_llm.setdefault(llm.span.span_id, []).append(node)
            elif tool is None:
                run.llm.append(node)
                if run is group:
                    group.group_tops.append(top)
                llm = node
        elif role == TOOL and tool is None:
            # inside an LLM span too: a model call that streams runs the tools it asks for
            # before its span ends (the Vercel AI SDK's streamText)
            run.tools.append(node)
            tool = node
            if node.runs_agent and llm is None:
                sub = RunPlan(root=node, parent=run, is_agent=True, wrapped=True)
                plans.append(sub)
                run.sub_agents.append(sub)
                run, llm, tool = sub, None, None
        for child in reversed(node.children):
            stack.append((child, run, llm, tool))
    return count
