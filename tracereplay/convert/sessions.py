"""The conversation (session) a run is a turn of, from whatever attribute its telemetry carries.

Each convention names it differently; none is needed by the others, so the first found wins, in
a fixed order: spans first, then on each span the names in ``KEYS`` order, then OpenInference's
``metadata`` object (LangChain's ``session_id``, ``thread_id``, ``conversation_id``), then the
OpenAI Agents SDK's ``group_id`` on Logfire's trace span. A span's resource counts as the span.
Values are ids: strings or numbers; empty and ``null`` are none.

The spans, in order:

- a run no other run called (a turn): the spans above it **outermost first** (the request's
  span, the application's ``agent_run(..., session_id=...)``, a framework's wrapper), then the
  wrappers folded into it, then its own span. The application's code around the framework
  knows the conversation; the framework's own agent span may carry an id of that one run
  (pydantic-ai gives every run a fresh ``gen_ai.conversation.id`` when it is given none), which
  must not split a conversation into one session per turn;
- a sub-agent's run (or a handoff's): its own span, then the spans above it nearest first (the
  calling agent's run among them), then the wrappers folded into it: a sub-agent that names a
  conversation of its own keeps it, else it takes its caller's;
- then the run's LLM and tool spans in start order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tracereplay.convert.tree import Node, RunPlan
from tracereplay.convert.values import as_name, decoded
from tracereplay.semconv import (
    AGENTS_GROUP_ID,
    AGENTS_TRACE_ID,
    AI_SDK_SESSION_ID,
    GEN_AI_CONVERSATION_ID,
    LANGFUSE_SESSION_ID,
    LANGSMITH_SESSION_ID,
    LANGSMITH_THREAD_ID,
    OPENINFERENCE_METADATA,
    SESSION_ID,
    TRACELOOP_CONVERSATION_ID,
    TRACELOOP_SESSION_ID,
    TRACELOOP_THREAD_ID,
)
from tracereplay.spans import Span

#: the attribute names of a session id, in the order they are read on each span
KEYS: tuple[str, ...] = (
    GEN_AI_CONVERSATION_ID,
    SESSION_ID,
    LANGFUSE_SESSION_ID,
    TRACELOOP_SESSION_ID,
    TRACELOOP_CONVERSATION_ID,
    TRACELOOP_THREAD_ID,
    AI_SDK_SESSION_ID,
    LANGSMITH_SESSION_ID,
    LANGSMITH_THREAD_ID,
)
#: the keys of OpenInference's ``metadata`` object (LangChain's run metadata) that name one
METADATA_KEYS: tuple[str, ...] = ("session_id", "conversation_id", "thread_id")
_NONE = ("", "null", "None", "undefined")
#: metadata text that may name one (the JSON is decoded only then: LangChain's is on every span)
_NAMES_ID = re.compile("|".join(METADATA_KEYS))
#: how far up the tree the walk goes (parent links may loop until ``plan_trace`` breaks them)
_MAX_DEPTH = 200


def session_id(plan: RunPlan) -> str | None:
    """The session id of the run ``plan`` makes, or ``None`` when no span of it names one."""
    for span in _spans(plan):
        found = span_session_id(span)
        if found is not None:
            return found
    return None


def span_session_id(span: Span) -> str | None:
    """The session id one span (or its resource) names, by the module's rule."""
    attributes = span.attributes
    for source in (attributes, span.resource):
        for key in KEYS:
            value = source.get(key)
            if value is not None:
                found = _id(value)
                if found is not None:
                    return found
    metadata = attributes.get(OPENINFERENCE_METADATA)
    if metadata is not None and (type(metadata) is not str or _NAMES_ID.search(metadata)):
        found = _from_metadata(decoded(metadata))
        if found is not None:
            return found
    if AGENTS_TRACE_ID in attributes:  # Logfire's span of an OpenAI Agents SDK trace
        return _id(attributes.get(AGENTS_GROUP_ID))
    return None


def _from_metadata(metadata: Any) -> str | None:
    if not isinstance(metadata, dict):
        return None
    for key in METADATA_KEYS:
        found = _id(metadata.get(key))
        if found is not None:
            return found
    return None


def _id(value: Any) -> str | None:
    text = as_name(value).strip()
    return None if text in _NONE else text


def _spans(plan: RunPlan) -> Iterator[Span]:
    """The spans looked at, in the module's order."""
    root = plan.root
    if root is not None:
        seen = {id(root)}
        above: list[Node] = []  # nearest first
        node: Node | None = root.parent
        while node is not None and id(node) not in seen and len(above) < _MAX_DEPTH:
            seen.add(id(node))
            above.append(node)
            node = node.parent
        beside = [n for n in plan.folded if id(n) not in seen]  # folded in from beside the root
        if plan.run_parent() is None:  # a turn: the outermost span naming one wins
            order = [*reversed(above), *beside, root]
        else:
            order = [root, *above, *beside]
        for node in order:
            yield node.span
    inner = sorted([*plan.llm, *plan.tools], key=lambda n: (n.span.start_ns, n.span.span_id))
    for node in inner:
        yield node.span
