"""The interface of a framework adapter: run a framework's own agent object and intercept its tools.

An adapter wraps the object ``--agent module:attr`` names (a ``pydantic_ai.Agent``, an OpenAI
Agents SDK ``Agent``, a compiled LangGraph graph, a strands ``Agent``, a Google ADK agent, a
LlamaIndex workflow agent, a smolagents agent) and
gives the Replayer three things: how to run it once on a query (``arun``), how to route every
tool execution it performs through the replay's interceptor (``intercept``), and, where the
framework needs one, an instrumentor for its spans (``instrument``).

Airtight replay: an adapter calls ``mark_replayed()`` inside each tool execution it answered
from the recording. That sets ``tracereplay.tool.replayed = true`` on the current span (the
framework's own tool span, when it records one) and counts the answer, so the Replayer can tell
a tool span that ran for real from one that was answered.
"""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from tracereplay.semconv import TOOL_REPLAYED

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = [
    "REPLAYED_ATTRIBUTE",
    "AnswerCounter",
    "Asked",
    "FrameworkAgent",
    "ToolAnswer",
    "arun_live",
    "ask",
    "count_answers",
    "loaded_subclasses",
    "mark_replayed",
    "mro_names",
    "qualified_name",
    "run_live",
    "wrapt_patch",
]

#: ``answer(tool_name, arguments_dict)``: the tool's result, ``RUN_LIVE``, or raise
ToolAnswer = Callable[[str, dict[str, Any]], Any]

#: the span attribute that says a tool span was answered from the recording
REPLAYED_ATTRIBUTE = TOOL_REPLAYED


class AnswerCounter:
    """How many tool executions were answered (``mark_replayed`` calls) in one replay."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def add(self) -> None:
        with self._lock:
            self.count += 1


_counter: ContextVar[AnswerCounter | None] = ContextVar("tracereplay_answer_counter", default=None)


@contextlib.contextmanager
def count_answers() -> Iterator[AnswerCounter]:
    """Count the ``mark_replayed()`` calls made in this context (the Replayer reads ``.count``)."""
    counter = AnswerCounter()
    token = _counter.set(counter)
    try:
        yield counter
    finally:
        _counter.reset(token)


def mark_replayed() -> None:
    """Say that the tool execution running now was answered from the recording.

    Sets ``tracereplay.tool.replayed = true`` on the current span when it is recording, and
    counts the answer for the replay in progress.
    """
    from opentelemetry import trace

    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute(REPLAYED_ATTRIBUTE, True)
    counter = _counter.get()
    if counter is not None:
        counter.add()


class Asked(NamedTuple):
    """What the replay said of one tool execution (``ask``)."""

    live: bool  # run the real tool
    value: Any = None  # the tool's result when answered
    replaying: bool = True  # a replay's answer is set in this context (else nothing asked)


_NOT_REPLAYING = Asked(live=True, replaying=False)
_RUN_IT = Asked(live=True)


def ask(
    var: ContextVar[ToolAnswer | None] | ToolAnswer | None,
    name: str,
    arguments: dict[str, Any] | Callable[[], dict[str, Any]],
    *,
    failure: Callable[[Exception], BaseException] | None = None,
) -> Asked:
    """One tool execution asked of the replay answering this context (``var``: the adapter's
    ``ContextVar``, or the answer itself):
    its recorded result (the execution marked replayed: ``mark_replayed``), or ``live`` when
    nothing replays here or the answer is ``RUN_LIVE``. A recorded failure is marked and raised
    where the tool would have raised it (``failure`` makes it the framework's own exception).
    ``arguments`` may be a callable, read only when a replay asks. Every adapter answers
    through this one function, so the rule (mark, raise, run live) is written once."""
    from tracereplay.sdk.replay_hook import RUN_LIVE

    answer = var.get() if isinstance(var, ContextVar) else var
    if answer is None:
        return _NOT_REPLAYING
    args = arguments() if callable(arguments) else arguments
    try:
        value = answer(name, args)
    except Exception as exc:
        mark_replayed()
        if failure is None:
            raise
        raise failure(exc) from exc
    if value is RUN_LIVE:
        return _RUN_IT
    mark_replayed()
    return Asked(live=False, value=value)


def run_live(asked: Asked, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run the real tool ``fn`` for a ``live`` answer: in a replay, with ``@tracereplay.tool``
    interception off inside it (the tool's own functions are not asked again)."""
    if not asked.replaying:
        return fn(*args, **kwargs)
    from tracereplay.sdk.replay_hook import tool_interceptor

    with tool_interceptor(None):
        return fn(*args, **kwargs)


async def arun_live(
    asked: Asked, fn: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any
) -> Any:
    """``run_live`` for an async tool."""
    if not asked.replaying:
        return await fn(*args, **kwargs)
    from tracereplay.sdk.replay_hook import tool_interceptor

    with tool_interceptor(None):
        return await fn(*args, **kwargs)


class SharedPatch:
    """A class-level patch of a framework, shared by the replays running at once: the first
    user installs it, the last one removes it, and each replay's answer lives in a
    ``ContextVar`` the patched code reads (so concurrent cases never see each other's)."""

    def __init__(self, install: Callable[..., None], uninstall: Callable[[], None]) -> None:
        self._install = install
        self._uninstall = uninstall
        self._lock = threading.Lock()
        self._users = 0

    @contextlib.contextmanager
    def answering(self, var: ContextVar[ToolAnswer | None], answer: ToolAnswer) -> Iterator[None]:
        """The patch in place and ``var`` set to ``answer`` for the block."""
        with self.held():
            token = var.set(answer)
            try:
                yield
            finally:
                var.reset(token)

    @contextlib.contextmanager
    def held(self, *args: Any) -> Iterator[None]:
        """The patch in place for the block (answering nothing by itself: an adapter that must
        install it before an instrumentor wraps the same methods holds it from then on);
        ``args`` go to the install when this user is the first."""
        with self._lock:
            if self._users == 0:
                self._install(*args)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._uninstall()


def wrapt_patch(
    owner: Callable[[], Any], name: str, wrapper: Callable[[Any, Any, tuple, dict], Any]
) -> SharedPatch:
    """A ``SharedPatch`` wrapping ``owner().name`` (a framework's class or module, found when
    the patch is installed: the framework is imported then, not before) with ``wrapt``:
    ``wrapper(wrapped, instance, args, kwargs)`` runs in place of it. wrapt keeps the
    original's name, signature and descriptor kind (a method stays a method, a classmethod a
    classmethod), so a framework that inspects it sees what it wrote; removing the patch puts
    back the very object that was there."""
    import wrapt

    saved: list[tuple[Any, Any]] = []

    def install() -> None:
        target = owner()
        saved.append((target, vars(target)[name]))
        wrapt.wrap_function_wrapper(target, name, wrapper)

    def uninstall() -> None:
        target, original = saved.pop()
        setattr(target, name, original)

    return SharedPatch(install, uninstall)


def wrapt_patch_each(
    owners: Callable[[], Iterable[Any]], name: str, wrapper: Callable[[Any, Any, tuple, dict], Any]
) -> SharedPatch:
    """One ``SharedPatch`` wrapping ``name`` on each of several owners (``wrapt_patch`` each),
    found when the patch is installed: the subclasses loaded by then that define their own
    ``name``, or the modules that imported the same function (which ones varies between a
    framework's versions). Removing it puts back each original."""
    held: list[contextlib.ExitStack] = []

    def install() -> None:
        stack = contextlib.ExitStack()
        for owner in owners():
            stack.enter_context(wrapt_patch(lambda o=owner: o, name, wrapper).held())
        held.append(stack)

    def uninstall() -> None:
        held.pop().close()

    return SharedPatch(install, uninstall)


def loaded_subclasses(cls: type) -> Iterator[type]:
    """Every subclass of ``cls`` loaded now, at any depth, each once (a framework's tool or
    model classes an adapter patches: those the agent's code defined count too)."""
    seen: set[type] = set()
    stack = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        if sub not in seen:
            seen.add(sub)
            yield sub
            stack.extend(sub.__subclasses__())


def qualified_name(cls: type) -> str:
    """An exception class as OpenTelemetry and OpenInference name it in a span's status
    (``module.QualName``; a builtin bare)."""
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def mro_names(obj: Any) -> set[str]:
    """``module.QualName`` of every class in ``type(obj)``'s MRO (decide without importing)."""
    return {f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__}


class FrameworkAgent(abc.ABC):
    """A framework's own agent object, run and intercepted the way that framework does it."""

    framework: ClassVar[str]  # "pydantic-ai", "openai-agents", "langgraph", "strands", ...
    #: every tool execution of a replay leaves a tool span in its trace (the adapter makes sure
    #: of it): a trace with none ran no tool, and the airtight check does not count the tool
    #: calls the model asked for instead (a call the framework refused never ran)
    records_tool_spans: ClassVar[bool] = False
    #: the object keeps a run's conversation on itself (strands, smolagents, AutoGen): two
    #: cases on it at once would share it, so an agent process runs one case at a time and the
    #: eval starts a process per case running instead (``dispatch``)
    one_case_at_a_time: ClassVar[bool] = False
    #: the distribution that installs the framework, and the versions of it the adapter was
    #: tested with (PEP 440 specifiers, any of which may match): another version is named in
    #: one line when the agent loads (``version_note``), since a framework's internals, which
    #: an adapter patches, change between releases
    distribution: ClassVar[str] = ""
    tested: ClassVar[tuple[str, ...]] = ()
    #: the framework's payload forms the converter reads (modules of ``convert/forms``): the
    #: conversion half of the adapter, kept below ``convert/`` so conversion needs no replay
    conversion_forms: ClassVar[tuple[str, ...]] = ()
    #: ``arun`` takes a case's history (``history=[{"role", "content"}, ...]``, the conversation
    #: before the question) and gives it to the framework the way it takes earlier messages
    takes_history: ClassVar[bool] = False

    def __init__(self, obj: Any, spec: str) -> None:
        self.obj, self.spec = obj, spec

    @classmethod
    @abc.abstractmethod
    def accepts(cls, obj: Any) -> bool:
        """Whether ``obj`` is this framework's agent (from type names; never import the framework)."""

    @abc.abstractmethod
    async def arun(self, query: str) -> str:
        """Run once on ``query`` the framework's way; the final text. An adapter that sets
        ``takes_history`` also takes ``history`` (a case's earlier messages, only passed when
        the case has some)."""

    @abc.abstractmethod
    def intercept(self, answer: ToolAnswer) -> contextlib.AbstractContextManager[None]:
        """While active, every tool execution the framework performs for this agent (and its
        sub-agents, handoff targets, agent-as-tool agents) calls ``answer(tool_name, arguments)``
        instead of the tool: the value returned is the tool's result; ``RUN_LIVE`` runs the real
        tool; an exception raised by ``answer`` is raised where the tool would have raised it.
        Call ``mark_replayed()`` inside the tool execution when it was answered."""

    def instrument(
        self, tracer_provider: TracerProvider
    ) -> contextlib.AbstractContextManager[None]:
        """Make the framework's spans reach ``tracer_provider`` during the replay (default:
        nothing; frameworks with native OTel use the global provider, which the Replayer sets)."""
        return contextlib.nullcontext()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"

    @classmethod
    def version_note(cls) -> str | None:
        """One line naming the installed framework version when the adapter was not tested
        with it (None when it was, or when nothing says)."""
        if not cls.distribution or not cls.tested:
            return None
        from importlib.metadata import PackageNotFoundError, version

        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            installed = version(cls.distribution)
            if any(Version(installed) in SpecifierSet(spec) for spec in cls.tested):
                return None
        except (PackageNotFoundError, InvalidVersion):
            return None
        return (
            f"{cls.distribution} {installed} is not a version the {cls.framework} adapter was "
            f"tested with ({' or '.join(cls.tested)}): if its replay goes wrong, that may be why"
        )


class SharedContext:
    """A process-wide context entered by the first user and exited by the last (replays of
    several cases run at once; instrumentors and trace processors are process-wide): a
    ``SharedPatch`` whose install enters the first user's context."""

    def __init__(self) -> None:
        self._stack: contextlib.ExitStack | None = None
        self._patch = SharedPatch(self._enter, self._exit)

    def _enter(self, factory: Callable[[], contextlib.AbstractContextManager[Any]]) -> None:
        stack = contextlib.ExitStack()
        stack.enter_context(factory())
        self._stack = stack

    def _exit(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()

    def use(
        self, factory: Callable[[], contextlib.AbstractContextManager[Any]]
    ) -> contextlib.AbstractContextManager[None]:
        return self._patch.held(factory)
