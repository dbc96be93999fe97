"""smolagents' payload forms: the answer tool an agent ends its run with (``final_answer``;
DSPy's ``ReAct`` ends the same way with ``finish``), and a provider response recorded as its
Python repr (``ChatMessage.raw``)."""

from __future__ import annotations

import re
from typing import Any

#: the tool an agent calls to end its run with its answer (smolagents' ``final_answer``)
ANSWER_TOOLS = frozenset(("final_answer", "finish"))


def is_answer_tool(name: str | None) -> bool:
    """Whether a tool call is the framework's way to give the run's answer (smolagents agents
    end by calling ``final_answer(answer)``, DSPy's ``ReAct`` by calling ``finish()``): the answer is the run's response, not a tool
    call (its recording would otherwise answer a changed final answer in a replay)."""
    return name in ANSWER_TOOLS


_REPR_FINISH = re.compile(r"\bfinish_reason='([A-Za-z_]+)'")


def repr_finish_reason(value: Any) -> str:
    """The finish reason inside a provider response recorded as its Python repr, as smolagents'
    ``ChatMessage.raw`` (``ChatCompletion(choices=[Choice(finish_reason='tool_calls', ...)])``):
    the first choice's; ``""`` when there is none."""
    if type(value) is not str or "finish_reason=" not in value:
        return ""
    found = _REPR_FINISH.search(value)
    return found.group(1) if found else ""
