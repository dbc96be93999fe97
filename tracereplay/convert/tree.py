"""The span tree of one trace, cut into runs.

Rules:
- Every agent span (``invoke_agent``, OpenInference AGENT, Traceloop ``agent``) heads a run. An
  agent inside another run is a run of its own (``parent_run_id``) and a tool call of its parent,
  unless a tool span of the parent already wraps it.
- LLM spans under no agent belong to their outermost workflow span (``invoke_workflow``,
  OpenInference CHAIN, Traceloop ``workflow``), else to one run headed by the trace's top span
  (the earliest top span when the tree is broken). Such a run exists only if it has an LLM call.
- An LLM span inside another LLM span is the same call seen by two instrumentations: only the
  outer one counts; the inner ones fill what the outer one lacks.
- Only the outermost tool span counts; LLM spans inside a tool span belong to the tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from tracereplay.convert.detect import AGENT, LLM, TOOL, WORKFLOW, detect
from tracereplay.spans import Span


class Node:
    """A span with its role, convention and place in the tree."""

    __slots__ = ("span", "role", "convention", "parent", "children", "seen")

    def __init__(self, span: Span, role: int, convention: str) -> None:
        self.span = span
        self.role = role
        self.convention = convention
        self.parent: Node | None = None
        self.children: list[Node] = []
        self.seen = False


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
    for node in nodes:
        parent = get(node.span.parent_span_id)
        if parent is None or parent is node:
            tops.append(node)
        else:
            node.parent = parent
            parent.children.append(node)
    return nodes, tops


def plan_runs(spans: list[Span]) -> list[RunPlan]:
    """The runs of one trace (only those that are runs), ordered by root start."""
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
    if group.llm:
        group.root = min(group.group_tops, key=lambda n: _order(n.span))
        plans.append(group)
    out = [p for p in plans if p.materialized]
    out.sort(key=lambda p: _order(p.root.span))  # type: ignore[union-attr]
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
        elif role == LLM:
            if llm is not None:
                run.inner_llm.setdefault(llm.span.span_id, []).append(node)
            elif tool is None:
                run.llm.append(node)
                if run is group:
                    group.group_tops.append(top)
                llm = node
        elif role == TOOL and llm is None and tool is None:
            run.tools.append(node)
            tool = node
        for child in reversed(node.children):
            stack.append((child, run, llm, tool))
    return count
