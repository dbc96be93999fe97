"""LangChain's callback events as OpenTelemetry GenAI spans, for the replay of a LangGraph graph.

``GenAiCallbackHandler`` is a LangChain callback handler. While a replay runs, the LangGraph
adapter adds it to every callback manager LangChain creates (as OpenInference's tracer adds
itself), and it writes on the replay's ``TracerProvider`` what the converter reads as GenAI:

- a run LangChain names as an agent (``lc_agent_name`` in its metadata is the run's own name:
  ``create_agent(name=...)``): ``invoke_agent <name>``;
- any other chain run with no recorded run above it (the graph the replay invoked, a graph a
  tool runs): ``invoke_workflow <name>``;
- a chat model or LLM call: ``chat <model>``, with its messages as ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` (LangChain's ``convert_to_openai_messages``, then the GenAI
  shape), model, provider, usage and finish reason;
- a tool execution: ``execute_tool <name>``, with the call's id, its arguments as the tool
  sees them and its result (a ``ToolMessage``'s content);
- a failed run: status ERROR and the exception.

Other runs (graph nodes, the runnables inside them) get no span: their children hang from the
nearest recorded run. No span is made current (LangChain runs callbacks apart from the code
they report on); ``span(run_id)`` finds a run's span, where the adapter marks an answered tool.

Why not OpenInference's LangChain tracer, which the recording may have used: it makes a span
of every run and flattens each into attributes, the graph's whole message state as JSON on
every node span, 10-12 ms of CPU a case for a three-call graph (about half the agent's own);
this handler writes the spans a replay reads. It also gives a replay its LLM and tool spans
when no LangChain instrumentation is installed where the agent runs (a graph recorded through
LangSmith's or Langfuse's OpenTelemetry export). ``run_inline``: called on the agent's own
thread, not handed to the thread pool event by event.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import convert_to_openai_messages
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from tracereplay.convert.values import dumps
from tracereplay.replay.frameworks.base import qualified_name
from tracereplay.sdk.messages import output_message, to_genai_messages
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_WORKFLOW_NAME,
)

__all__ = ["GenAiCallbackHandler"]

_TOOL = "execute_tool"


def _openai_messages(messages: Any) -> list[dict[str, Any]]:
    """LangChain messages as OpenAI chat messages (LangChain's own conversion)."""
    try:
        converted = convert_to_openai_messages(list(messages))
    except Exception:  # a message LangChain cannot convert: its text, as the user's
        converted = [{"role": "user", "content": str(m)} for m in messages]
    return converted if isinstance(converted, list) else [converted]


def _model(metadata: dict[str, Any] | None, kwargs: dict[str, Any]) -> str:
    params = kwargs.get("invocation_params") or {}
    return str(
        (metadata or {}).get("ls_model_name")
        or params.get("model")
        or params.get("model_name")
        or params.get("model_id")
        or ""
    )


def _usage(message: Any, llm_output: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if isinstance(usage, dict):
        return usage.get("input_tokens"), usage.get("output_tokens")
    usage = (llm_output or {}).get("token_usage") if isinstance(llm_output, dict) else None
    if isinstance(usage, dict):
        return usage.get("prompt_tokens"), usage.get("completion_tokens")
    return None, None


def _tool_result(output: Any) -> str | None:
    """A tool's output as the model is sent it: a ``ToolMessage``'s content, else the value."""
    if output is None:
        return None
    content = getattr(output, "content", output)
    if isinstance(content, str):
        return content
    return dumps(content)


class _Spans:
    """The recorded runs' spans and every run's parent (runs that get no span included), by
    LangChain run id; entries go when their run ends."""

    __slots__ = ("parents", "spans")

    def __init__(self) -> None:
        self.spans: dict[UUID, Any] = {}
        self.parents: dict[UUID, UUID | None] = {}

    def nearest(self, run_id: UUID | None) -> Any:
        """The span of ``run_id``'s nearest recorded run (itself included), or None."""
        seen = 0
        while run_id is not None and seen < 1000:
            span = self.spans.get(run_id)
            if span is not None:
                return span
            run_id = self.parents.get(run_id)
            seen += 1
        return None


class GenAiCallbackHandler(BaseCallbackHandler):
    """GenAI spans of LangChain runs on ``tracer_provider`` (see the module doc)."""

    run_inline = True
    # events no span is made of: LangChain skips the call (not ``ignore_agent``: it gates the
    # tool events too)
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self, tracer_provider: Any) -> None:
        self._tracer = tracer_provider.get_tracer("tracereplay.langchain")
        self._runs = _Spans()

    def span(self, run_id: UUID | None) -> Any:
        """The span of LangChain run ``run_id``, or None (not recorded, or ended)."""
        return None if run_id is None else self._runs.spans.get(run_id)

    # -------------------------------------------------------------- opening and closing
    def _open(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        name: str,
        attributes: dict[str, Any],
    ) -> None:
        parent = self._runs.nearest(parent_run_id)
        context = None if parent is None else trace.set_span_in_context(parent)
        self._runs.parents[run_id] = parent_run_id
        self._runs.spans[run_id] = self._tracer.start_span(
            name, context=context, attributes=attributes
        )

    def _close(
        self,
        run_id: UUID,
        attributes: dict[str, Any] | None = None,
        error: BaseException | None = None,
    ) -> None:
        self._runs.parents.pop(run_id, None)
        span = self._runs.spans.pop(run_id, None)
        if span is None:
            return
        for key, value in (attributes or {}).items():
            if value is not None:
                span.set_attribute(key, value)
        if error is not None:
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, f"{qualified_name(type(error))}: {error}"))
        span.end()

    # --------------------------------------------------------------------- chains
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "chain"
        if (metadata or {}).get("lc_agent_name") == name:
            attributes = {GEN_AI_OPERATION_NAME: "invoke_agent", GEN_AI_AGENT_NAME: name}
            self._open(run_id, parent_run_id, f"invoke_agent {name}", attributes)
            return
        above = self._runs.nearest(parent_run_id)
        if above is None or _is_tool(above):
            attributes = {GEN_AI_OPERATION_NAME: "invoke_workflow", GEN_AI_WORKFLOW_NAME: name}
            self._open(run_id, parent_run_id, f"invoke_workflow {name}", attributes)
        else:
            self._runs.parents[run_id] = parent_run_id

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)

    # ----------------------------------------------------------------- model calls
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        sent = [m for batch in messages for m in batch]
        self._open_llm(run_id, parent_run_id, metadata, kwargs, _openai_messages(sent))

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        sent = [{"role": "user", "content": p} for p in prompts]
        self._open_llm(run_id, parent_run_id, metadata, kwargs, sent)

    def _open_llm(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
        sent: list[dict[str, Any]],
    ) -> None:
        model = _model(metadata, kwargs)
        attributes = {
            GEN_AI_OPERATION_NAME: "chat",
            GEN_AI_REQUEST_MODEL: model or None,
            GEN_AI_PROVIDER_NAME: (metadata or {}).get("ls_provider"),
            GEN_AI_INPUT_MESSAGES: dumps(to_genai_messages(sent)),
        }
        attributes = {k: v for k, v in attributes.items() if v is not None}
        self._open(run_id, parent_run_id, f"chat {model}".strip(), attributes)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        generations = getattr(response, "generations", None) or [[]]
        generation = generations[0][0] if generations and generations[0] else None
        message = getattr(generation, "message", None)
        info = getattr(generation, "generation_info", None) or {}
        meta = getattr(message, "response_metadata", None) or {}
        finish = info.get("finish_reason") or meta.get("finish_reason")
        if message is not None:
            (sent,) = _openai_messages([message]) or [{}]
            out = output_message(sent.get("content"), sent.get("tool_calls"), finish)
        elif generation is not None:
            out = output_message(getattr(generation, "text", ""), None, finish)
        else:
            out = None
        llm_output = getattr(response, "llm_output", None)
        input_tokens, output_tokens = _usage(message, llm_output)
        model = meta.get("model_name") or (
            llm_output.get("model_name") if isinstance(llm_output, dict) else None
        )
        self._close(
            run_id,
            {
                GEN_AI_OUTPUT_MESSAGES: dumps([out]) if out else None,
                GEN_AI_RESPONSE_FINISH_REASONS: (finish,) if finish else None,
                GEN_AI_RESPONSE_MODEL: model,
                GEN_AI_USAGE_INPUT_TOKENS: input_tokens,
                GEN_AI_USAGE_OUTPUT_TOKENS: output_tokens,
            },
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)

    # ----------------------------------------------------------------------- tools
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        attributes = {
            GEN_AI_OPERATION_NAME: _TOOL,
            GEN_AI_TOOL_NAME: name,
            GEN_AI_TOOL_CALL_ARGUMENTS: dumps(inputs) if inputs is not None else input_str,
        }
        if kwargs.get("tool_call_id"):
            attributes[GEN_AI_TOOL_CALL_ID] = kwargs["tool_call_id"]
        self._open(run_id, parent_run_id, f"{_TOOL} {name}", attributes)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, {GEN_AI_TOOL_CALL_RESULT: _tool_result(output)})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._close(run_id, error=error)


def _is_tool(span: Any) -> bool:
    attributes = getattr(span, "attributes", None) or {}
    return attributes.get(GEN_AI_OPERATION_NAME) == _TOOL
