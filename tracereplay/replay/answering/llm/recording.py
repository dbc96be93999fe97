"""The recorded LLM calls a replay answers from: each call's messages (as the converter
normalized them), what it was asked with (model, temperature, tools offered: read from the call's
span), what it answered (text, tool calls, finish reason, tokens) or how it failed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from tracereplay.models import Run

if TYPE_CHECKING:  # an agent process answers from recordings the eval read: no store here
    from tracereplay.store.db import Store


@dataclass
class ToolOffer:
    """One tool offered to the model: its name and description (when known)."""

    name: str
    description: str = ""


@dataclass
class RecordedCall:
    """One recorded LLM call of a source run (or of a run nested under it)."""

    run_id: str
    round: int
    model: str = ""  # the model that answered (response model, else request model)
    request_model: str = ""
    temperature: float | None = None
    tools: list[ToolOffer] | None = None  # None: the recording does not say
    input_messages: list[dict[str, Any]] = field(default_factory=list)
    output_messages: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    started_at: datetime | None = None
    error: str | None = None  # the call failed (the span's status message)
    error_status: int | None = None  # the HTTP status the provider answered, when known
    nested: bool = False  # made by a run nested under the source run (sub-agent, handoff)

    @property
    def has_output(self) -> bool:
        return any(m.get("parts") for m in self.output_messages)

    def label(self) -> str:
        return f"round {self.round}" + (f" of run {self.run_id[:8]}" if self.nested else "")


_STATUS = re.compile(r"(?:status[_ ]code[:= ]+|Error code: |HTTP |\b)([45]\d\d)\b")


def error_status(message: str) -> int | None:
    """The HTTP status a recorded provider failure names (``Error code: 500``...), if any."""
    match = _STATUS.search(message)
    return int(match.group(1)) if match else None


_MESSAGE = re.compile(r"""['"]message['"]\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")
_PREFIX = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): ")
#: what the OpenAI client puts before the provider's message (``str(APIStatusError)``): it puts
#: it there again when the replayed error reaches it
_CLIENT_PREFIX = re.compile(r"^Error code: \d{3} - ")


def provider_message(error: str) -> str:
    """The provider's own message in a recorded failure (``... body: {'message': 'overloaded'}``
    gives ``overloaded``), else the text without its exception class and the OpenAI client's
    ``Error code: 500 - `` (openai-v2 records ``str(error)``)."""
    found = _MESSAGE.findall(error)
    if found:
        single, double = found[-1]
        return single or double
    return _CLIENT_PREFIX.sub("", _PREFIX.sub("", error, count=1), count=1)


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _float(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def _offers(items: Any) -> list[ToolOffer]:
    out = []
    for item in items if isinstance(items, list) else []:
        item = _json(item)
        if not isinstance(item, dict):
            continue
        fn = item.get("function") if isinstance(item.get("function"), dict) else item
        name = fn.get("name")
        if isinstance(name, str) and name:
            out.append(ToolOffer(name, str(fn.get("description") or "")))
    return out


def request_of(attributes: Mapping[str, Any]) -> tuple[str, float | None, list[ToolOffer] | None]:
    """(request model, temperature, tools offered) from an LLM span's attributes, as the GenAI
    conventions, OpenInference and OpenLLMetry record them ('' / None where not recorded)."""
    a = attributes
    params = _json(a.get("llm.invocation_parameters"))
    params = params if isinstance(params, dict) else {}
    # OpenInference records the Responses API's response object there for the OpenAI Agents
    # SDK: its model is the model that answered, not the one asked
    response_like = any(k in params for k in ("id", "object", "created_at"))
    model = (
        a.get("gen_ai.request.model")
        or (None if response_like else params.get("model") or params.get("model_name"))
        or a.get("traceloop.association.properties.ls_model_name")
        or ""
    )
    temperature = _float(a.get("gen_ai.request.temperature"))
    if temperature is None:
        temperature = _float(params.get("temperature"))
    tools: list[ToolOffer] | None = None
    definitions = _json(a.get("gen_ai.tool.definitions"))
    if isinstance(definitions, list):
        tools = _offers(definitions)
    else:
        indexed = sorted(
            (int(k.split(".")[2]), v)
            for k, v in a.items()
            if k.startswith("llm.tools.")
            and k.endswith(".tool.json_schema")
            and k.split(".")[2].isdigit()
        )
        if indexed:
            tools = _offers([v for _, v in indexed])
        elif isinstance(params.get("tools"), list):
            tools = _offers(params["tools"])
        else:
            names = sorted(
                (int(k.split(".")[3]), k)
                for k in a
                if k.startswith("llm.request.functions.")
                and k.endswith(".name")
                and k.split(".")[3].isdigit()
            )
            if names:
                tools = [
                    ToolOffer(str(a[k]), str(a.get(k[: -len(".name")] + ".description") or ""))
                    for _, k in names
                ]
    return str(model), temperature, tools


def load_llm_recordings(
    store: Store, sources: Iterable[Run], sub_runs: Mapping[str, Sequence[Run]]
) -> dict[str, list[RecordedCall]]:
    """For each source run id, the LLM calls its replay is answered from: its own and those of
    the runs nested under it, in the order they were made."""
    sources = list(sources)
    nested_of = {s.run_id: [r.run_id for r in sub_runs.get(s.run_id, ())] for s in sources}
    run_ids = sorted({s.run_id for s in sources} | {i for ids in nested_of.values() for i in ids})
    if not run_ids:
        return {}
    from tracereplay.store.runs import recorded_llm_calls  # the eval's side only

    rows = recorded_llm_calls(store, run_ids)
    by_run: dict[str, list[RecordedCall]] = {}
    for (
        run_id, rnd, _span_id, model, tin, tout, finish, started, inputs, outputs, attrs, code, msg,
    ) in rows:  # fmt: skip
        attributes = _json(attrs) if attrs else {}
        request_model, temperature, tools = request_of(attributes or {})
        error = None
        if code == "ERROR":
            error = str(msg or "the provider failed")
        by_run.setdefault(run_id, []).append(
            RecordedCall(
                run_id=run_id,
                round=int(rnd),
                model=model or request_model,
                # only the model asked is compared (the answering model may differ by name)
                request_model=request_model,
                temperature=temperature,
                tools=tools,
                input_messages=_json(inputs) or [],
                output_messages=_json(outputs) or [],
                finish_reason=finish or "",
                input_tokens=tin,
                output_tokens=tout,
                started_at=started,
                error=error,
                error_status=error_status(error) if error else None,
            )
        )
    for calls in by_run.values():
        restore_tool_requests(calls)
    out: dict[str, list[RecordedCall]] = {}
    for source in sources:
        calls = list(by_run.get(source.run_id, []))
        for nested_id in nested_of[source.run_id]:
            for call in by_run.get(nested_id, []):
                call.nested = True
                calls.append(call)
        # in the order they were made (a handoff target's calls come after the handoff)
        calls.sort(key=lambda c: (c.started_at is None, c.started_at or datetime.min, c.round))
        out[source.run_id] = calls
    return out


def _tool_call_ids(message: Mapping[str, Any], kind: str) -> list[str]:
    return [
        str(p["id"])
        for p in message.get("parts") or ()
        if isinstance(p, Mapping) and p.get("type") == kind and p.get("id")
    ]


def recorded_call_ids(calls: Sequence[RecordedCall]) -> list[str]:
    """The ids of every tool call the recorded model asked for (its output messages)."""
    return [i for c in calls for m in c.output_messages for i in _tool_call_ids(m, "tool_call")]


def restore_tool_requests(calls: Sequence[RecordedCall]) -> None:
    """Put back the assistant tool-call messages an instrumentation left out of a request's
    history (OpenLIT records the tool results but not the assistant message that asked for
    them): a tool result whose call id no assistant message before it holds gets, just before
    it, the assistant message of the run's earlier answer that made that call. ``calls``: one
    run's calls, in order; their input messages are then what the model was really sent."""
    asked: dict[str, dict[str, Any]] = {}
    for call in calls:
        present: set[str] = set()
        #: tool calls of the assistant messages before, not yet met by a result: a result
        #: whose id they do not hold still has its call there when the two ids differ (the
        #: OpenAI Agents SDK's Responses items: the call's item id ``fc_..``, the result's
        #: ``call_..``), so nothing is restored for it
        unmet = 0
        restored: list[dict[str, Any]] = []
        for message in call.input_messages:
            if not isinstance(message, dict):
                restored.append(message)
                continue
            if message.get("role") == "assistant":
                ids = _tool_call_ids(message, "tool_call")
                present.update(ids)
                unmet += len(ids)
            elif message.get("role") == "tool":
                for call_id in _tool_call_ids(message, "tool_call_response"):
                    origin = asked.get(call_id)
                    if call_id in present or unmet > 0:
                        unmet = max(0, unmet - 1)
                    elif origin is not None:
                        restored.append(origin)
                        present.update(_tool_call_ids(origin, "tool_call"))
            restored.append(message)
        call.input_messages = restored
        for message in call.output_messages:
            if isinstance(message, dict) and _tool_call_ids(message, "tool_call"):
                origin = {"role": "assistant", "parts": list(message.get("parts") or ())}
                for call_id in _tool_call_ids(message, "tool_call"):
                    asked[call_id] = origin
