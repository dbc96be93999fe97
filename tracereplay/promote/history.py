"""A promoted turn's history: the conversation the agent had before the question.

Only a turn of a session with earlier turns has one (``store/sessions.py``). It is taken, first,
from what the agent sent the model: the input of the run's first LLM call, up to the last user
message with text (the question), as ``{"role", "content"}`` messages of the user's and the
assistant's text (system prompts are the agent's own, not the conversation; tool calls and
results are left out: the case's vocabulary has no place for them). Failing that (the call
recorded no content, or no earlier message), from the earlier turns' recorded questions and
answers, in order.
"""

from __future__ import annotations

from typing import Any

from tracereplay.convert.messages import message_text
from tracereplay.store.db import Store
from tracereplay.store.sessions import earlier_turns, first_call_input

#: the roles of the conversation kept in a history
_KEPT = ("user", "assistant")


def history_of(store: Store, run_id: str) -> list[dict[str, str]]:
    """The history of the case run ``run_id`` becomes; empty for no turn after the first."""
    turns = earlier_turns(store, run_id)
    if not turns:
        return []
    recorded = recorded_history(first_call_input(store, run_id))
    if recorded:
        return recorded
    history: list[dict[str, str]] = []
    for turn in turns:
        if turn["query"]:
            history.append({"role": "user", "content": turn["query"]})
        if turn["response"]:
            history.append({"role": "assistant", "content": turn["response"]})
    return history


def recorded_history(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The user and assistant text before the last user message with text (the question);
    empty when there is none, or when nothing before it is the user's (an agent's scaffolding,
    not a conversation)."""
    question = None
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user" and message_text(m):
            question = i
            break
    if question is None:
        return []
    history = []
    for m in messages[:question]:
        role = m.get("role") if isinstance(m, dict) else None
        text = message_text(m) if role in _KEPT else ""
        if text:
            history.append({"role": str(role), "content": text})
    return history if any(m["role"] == "user" for m in history) else []
