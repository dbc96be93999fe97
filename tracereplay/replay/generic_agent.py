"""The generic adapter: an agent object of a framework no adapter knows, run through its entry point.

Agent objects share a few conventions, whatever their framework: they answer a question
through ``run``/``arun``, ``invoke``/``ainvoke``, ``kickoff``, ``get_response``, ``generate``,
``forward`` or ``__call__`` (sync or async), and give back the answer as text or as an object
that holds it (``.final_output``, ``.output``, ``.content``, ``.text``, ``.answer``,
``.summary``, the last of ``.messages``). ``entry_point`` picks the first of those the object
has (a ``forward`` is reached through ``__call__`` when the object is callable: the PyTorch and
DSPy convention, where ``__call__`` runs the module's hooks and then ``forward``), or the one
``--agent-call NAME`` names, and reads from its signature how the question goes in:

- positionally, when its first parameter takes a position;
- by name, when it takes keywords only: the one required keyword, else the object's one
  declared input (``signature.input_fields`` of a DSPy module, ``input_keys`` /
  ``input_variables`` of a chain), else a parameter named like a question
  (``query``, ``question``, ``input``, ``message``, ``prompt``, ``task``...);
- as the parameter's annotation wants it: text; a list of one user message for
  ``list[ChatMessage]`` (built with the framework's class: ``ChatMessage.from_user(q)``, else
  ``cls(role="user", content=q)``, else a chat dict).

An entry point that yields (a generator, an async generator: Semantic Kernel's ``invoke``)
is run to its end: the answer is the last item's. One that returns a run handle (an async
context manager with ``result()``: AG2's ``AgentRun``) is entered and driven to its result.

A case's history (the conversation before its question) goes into a parameter named like a
conversation (``history``, ``chat_history``, ``message_history``...), as ``{"role",
"content"}`` messages or the framework's message class; an entry point with none is replayed on
its question alone (the eval says the history was not taken).

Its tools are answered like a plain loop's, wherever the agent's code holds them
(``tool_functions``). An entry point that wants more than the question (another required
argument) is refused with one line naming it and ``--agent-call``.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "ENTRY_POINTS",
    "HISTORY_NAMES",
    "EntryCall",
    "EntryPointError",
    "answer_text",
    "entry_point",
]

#: the entry points tried, in this order
ENTRY_POINTS: tuple[str, ...] = (
    "run",
    "arun",
    "invoke",
    "ainvoke",
    "kickoff",
    "kickoff_async",
    "ask",
    "get_response",
    "generate",
    "forward",
    "__call__",
)
#: parameter names a question goes into, when an entry point takes it by keyword
QUESTION_NAMES: tuple[str, ...] = (
    "query", "question", "input", "message", "messages", "prompt", "task", "text", "user_input",
    "user_message", "request", "q", "inputs", "content",
)  # fmt: skip
#: parameter names an entry point takes a conversation's earlier messages by (a case's
#: history): the first of them it has, other than the question's, gets them
HISTORY_NAMES: tuple[str, ...] = (
    "history", "chat_history", "message_history", "conversation", "previous_messages",
)  # fmt: skip
#: attributes holding an answer, in the order they are read
ANSWER_ATTRIBUTES: tuple[str, ...] = (
    "final_output", "output", "content", "text", "body", "answer", "summary", "response", "result",
    "final_answer", "message", "messages", "chat_history",
)  # fmt: skip


class EntryPointError(Exception):
    """The object has no entry point that takes a question alone."""


def _declared_inputs(obj: Any) -> list[str]:
    """The one-input names an object declares (a DSPy signature, a chain's input keys)."""
    for holder in (getattr(obj, "signature", None), obj):
        if holder is None:
            continue
        for attr in ("input_fields", "input_keys", "input_variables"):
            try:
                value = getattr(holder, attr, None)
            except Exception:
                continue
            if isinstance(value, Mapping):
                value = list(value)
            if (
                isinstance(value, (list, tuple))
                and value
                and all(isinstance(v, str) for v in value)
            ):
                return list(value)
    return []


def _takes_text(annotation: Any) -> bool:
    """Whether a parameter of this annotation takes text (no annotation, ``str``, ``Any``, or a
    union with ``str`` in it)."""
    if annotation in (inspect.Parameter.empty, str, Any) or isinstance(annotation, str):
        return True
    return str in typing.get_args(annotation) if typing.get_origin(annotation) else False


def _one_message(cls: Any, query: str) -> Any:
    """A user message of the framework's message class: ``cls.from_user(query)`` (Haystack's
    ``ChatMessage``), else ``cls(role="user", content=query)``, else a chat dict."""
    from_user = getattr(cls, "from_user", None)
    if callable(from_user):
        try:
            return from_user(query)
        except Exception:
            pass
    if inspect.isclass(cls) and cls is not dict:
        try:
            return cls(role="user", content=query)
        except Exception:
            pass
    return {"role": "user", "content": query}


def _question(annotation: Any) -> Callable[[str], Any]:
    """How the question is given to a parameter of this annotation: as text; as a list of one
    user message (``list[ChatMessage]``: the message built with the framework's own class);
    as one message of a message class that has ``from_user``."""
    if _takes_text(annotation):
        return lambda query: query
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, Sequence, collections.abc.Sequence, collections.abc.Iterable):
        (item, *_) = typing.get_args(annotation) or (Any,)
        if _takes_text(item) and item is not Any and item is not inspect.Parameter.empty:
            return lambda query: [query]
        return lambda query: [_one_message(item, query)]
    if callable(getattr(annotation, "from_user", None)):
        return lambda query: _one_message(annotation, query)
    return lambda query: query


class EntryCall:
    """An entry point called with a question, and a case's history when it takes one: the
    best guess for a framework no adapter knows is a parameter named like a conversation
    (``HISTORY_NAMES``), given the ``{"role", "content"}`` messages as its annotation wants
    them (a list of the framework's message class, else the dicts)."""

    def __init__(
        self,
        ask: Callable[[str], tuple[tuple[Any, ...], dict[str, Any]]],
        fn: Callable[..., Any],
        history: inspect.Parameter | None = None,
    ) -> None:
        self._ask, self._fn, self._history = ask, fn, history
        self.takes_history = history is not None

    def __call__(self, query: str, history: Sequence[Mapping[str, str]] = ()) -> Any:
        args, kwargs = self._ask(query)
        if self._history is not None and history:
            kwargs = {**kwargs, self._history.name: _messages(self._history.annotation, history)}
        return self._fn(*args, **kwargs)


def _messages(annotation: Any, history: Sequence[Mapping[str, str]]) -> list[Any]:
    """A history as a parameter of this annotation takes it: ``list[Message]`` built with the
    framework's class (``cls(role=..., content=...)``), else ``{"role", "content"}`` dicts."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) else ()
    cls = args[0] if args else None
    out: list[Any] = []
    for m in history:
        message: Any = dict(m)
        if inspect.isclass(cls) and cls not in (dict, str, Any) and not _takes_text(cls):
            try:
                message = cls(role=m["role"], content=m["content"])
            except Exception:
                message = dict(m)
        out.append(message)
    return out


def _history_parameter(params: list[inspect.Parameter], question: str | None) -> Any:
    """The parameter a case's history goes into: the first named in ``HISTORY_NAMES`` that is
    not the question's and can be given by keyword; None when there is none."""
    P = inspect.Parameter
    for wanted in HISTORY_NAMES:
        for p in params:
            if p.name == wanted and p.name != question and p.kind in (
                P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY
            ):  # fmt: skip
                return p
    return None


def _caller(obj: Any, name: str, fn: Callable[..., Any]) -> EntryCall:
    """How ``fn`` takes the question and a history (see the module's docstring)."""
    try:
        try:
            signature = inspect.signature(fn, eval_str=True)
        except Exception:  # an annotation that does not resolve: read them unevaluated
            signature = inspect.signature(fn)
        params = list(signature.parameters.values())
    except (TypeError, ValueError):
        return EntryCall(lambda query: ((query,), {}), fn)
    P = inspect.Parameter
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    required = [
        p
        for p in params
        if p.default is P.empty and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
    ]
    var_kw = any(p.kind is P.VAR_KEYWORD for p in params)
    var_pos = any(p.kind is P.VAR_POSITIONAL for p in params)
    if positional and all(p is positional[0] for p in required):
        given = _question(positional[0].annotation)
        history = _history_parameter(params[1:], positional[0].name)
        return EntryCall(lambda query: ((given(query),), {}), fn, history)
    keyword: str | None = None
    if len(required) == 1 and required[0].kind is P.KEYWORD_ONLY:
        keyword = required[0].name
    elif not required:
        declared = _declared_inputs(obj)
        names = {p.name for p in params}
        if len(declared) == 1 and (declared[0] in names or var_kw):
            keyword = declared[0]
        elif var_pos:  # run(*messages, prompt=..., ...): the question is a message
            return EntryCall(lambda query: ((query,), {}), fn)
        else:
            keyword = next((q for q in QUESTION_NAMES if q in names), None)
    if keyword is None:
        wants = ", ".join(p.name for p in required) or "no question"
        raise EntryPointError(f"{name}() takes {wants}, not a question alone")
    param = next((p for p in params if p.name == keyword), None)
    given = _question(param.annotation if param is not None else inspect.Parameter.empty)
    named: str = keyword
    return EntryCall(
        lambda query: ((), {named: given(query)}), fn, _history_parameter(params, named)
    )


def entry_point(obj: Any, call: str | None = None) -> tuple[str, EntryCall]:
    """``(name, fn(query, history=()))``: the entry point of ``obj`` (``call``: the one named),
    or raise ``EntryPointError`` saying why none fits."""
    names = [call] if call else list(ENTRY_POINTS)
    if not call and callable(obj) and callable(getattr(type(obj), "forward", None)):
        names.remove("__call__")
        names.insert(names.index("forward"), "__call__")  # forward through __call__'s hooks
    tried: list[str] = []
    for name in names:
        if name == "__call__":
            fn = obj if callable(obj) and not inspect.isclass(obj) else None
        else:
            fn = getattr(obj, name, None)
        if not callable(fn):
            if call:
                raise EntryPointError(f"it has no method {call}()")
            continue
        try:
            return name, _caller(obj, name, fn)
        except EntryPointError as exc:
            if call:
                raise
            tried.append(str(exc))
    if tried:
        raise EntryPointError("; ".join(tried))
    raise EntryPointError("it has none of " + ", ".join(f"{n}()" for n in ENTRY_POINTS))


def _message_text(message: Any) -> str | None:
    """The text of one chat message (a dict, a framework's message object, a string)."""
    if isinstance(message, str):
        return message
    content = message.get("content") if isinstance(message, Mapping) else None
    if content is None and not isinstance(message, Mapping):
        content = getattr(message, "content", None)
        if content is None:
            content = getattr(message, "text", None)
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(getattr(part, "text", None), str):
                texts.append(part.text)
        return "".join(texts) if texts else None
    return None


def answer_text(value: Any, depth: int = 0) -> str | None:
    """The answer an entry point gave: text, or the text an answer object holds (``None``
    when nothing in it is text)."""
    if isinstance(value, str):
        return value
    if value is None or depth > 3:
        return None
    if isinstance(value, (list, tuple)):
        for item in reversed(value):  # the last message (or response item) with text
            text = _message_text(item)
            if text is None and not isinstance(item, (str, list, tuple)):
                text = answer_text(item, depth + 1)
            if text is not None:
                return text
        return None
    for attr in ANSWER_ATTRIBUTES:
        if isinstance(value, Mapping):
            inner = value.get(attr)
        else:
            try:
                inner = getattr(value, attr, None)
            except Exception:
                continue
        if inner is None or callable(inner):
            continue
        text = answer_text(inner, depth + 1)
        if text is not None:
            return text
    return None
