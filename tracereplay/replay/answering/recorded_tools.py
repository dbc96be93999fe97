"""Answering a replay's tool calls from the source run's recorded tool calls.

``RecordedTools`` is the tool interceptor evaluation installs (``tracereplay.sdk.replay_hook``):

- ``strict`` (default): a call is answered by an unused recording with the same tool name and
  equal arguments (numbers by value, ``1 == 1.0``; a bool is not a number);
- ``fifo``: by the next unused recording of that tool name, whatever its arguments.

A call with other arguments than the recording it meets is *argument drift*: reported, and in
strict mode left unanswered. An unanswered call raises ``NoRecordingError`` in the agent (the
case becomes an ERROR naming the tool and arguments), unless ``live_tools`` lets the real tool
run. Recordings the replay never used are reported too. Safe to call from several threads.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

import orjson

from tracereplay.checks.common import clip
from tracereplay.checks.matching import argument_changes, values_match
from tracereplay.models import ToolCallRecord
from tracereplay.scoring.outcomes import (
    ArgumentDrift,
    RecordedCallRef,
    ReplayReport,
    UnansweredCall,
)
from tracereplay.sdk.content import json_default
from tracereplay.sdk.replay_hook import RUN_LIVE

ToolMatch = Literal["strict", "fifo"]
TOOL_MATCHES: tuple[str, ...] = ("strict", "fifo")


class NoRecordingError(Exception):
    """Raised into the agent for a tool call the recording cannot answer."""


class RecordedToolError(Exception):
    """The recorded call failed: the replayed call fails the same way (same message)."""


#: the word loops and frameworks put before an exception's message in the tool result the
#: model gets (``f"Error: {exc}"``): a recorded ``Error: <message>`` (read from that result,
#: with no exception type recorded) is raised with ``str(e) == <message>``, so the same code
#: writes the same result again
GENERIC_ERROR = "Error"
_ERROR_TEXT = re.compile(r"^([A-Za-z_][\w.]*): (.*)$", re.DOTALL)
_NEVER_RAISED = (KeyboardInterrupt, SystemExit, GeneratorExit)


def _exception_class(name: str) -> type[BaseException] | None:
    """The exception class a recorded error names: a builtin, else the one loaded class of that
    name (None when there is none, or several)."""
    short = name.rpartition(".")[2]
    found = getattr(builtins, short, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    matches: set[type[BaseException]] = set()
    for module in list(sys.modules.values()):
        value = getattr(module, "__dict__", {}).get(short)
        if isinstance(value, type) and issubclass(value, BaseException):
            matches.add(value)
    return matches.pop() if len(matches) == 1 else None


def recorded_exception(error: str) -> BaseException:
    """The exception a replayed call raises for a recorded failure: of the recorded type when
    that type can be found (so the agent's ``except`` clauses behave as they did), always a
    ``RecordedToolError`` too (``Error: <message>``: a ``RecordedToolError`` of ``<message>``,
    see ``GENERIC_ERROR``). It reads as the recorded one: its class has the recorded class's
    name, module and qualified name (so a stored error names ``KeyError``, not a tracereplay
    path), and ``str(e)`` is the recorded text exactly (a ``KeyError``'s too, whose own ``str``
    would quote it again)."""
    match = _ERROR_TEXT.match(error)
    if match is not None and match.group(1) == GENERIC_ERROR:
        return RecordedToolError(match.group(2))
    if match is not None:
        cls = _exception_class(match.group(1))
        if cls is not None and not issubclass(cls, _NEVER_RAISED):
            text = match.group(2)
            try:
                return _replayed_class(cls)._make(text)
            except Exception:  # a class that cannot be mixed in
                pass
    return RecordedToolError(error)


_replayed_classes: dict[type[BaseException], type[BaseException]] = {}
_replayed_lock = threading.Lock()


class _Replayed(RecordedToolError):
    """Mixed into a replayed exception class: the recorded text is ``str(e)``."""

    _recorded_text: str = ""

    @classmethod
    def _make(cls, text: str) -> BaseException:
        args = _recorded_args(cls, text)
        try:
            exc = cls(*args)
        except Exception:  # a constructor that wants other arguments: build it bare
            exc = cls.__new__(cls, *args)
            exc.args = args
        exc._recorded_text = text
        return exc

    def __str__(self) -> str:
        return self._recorded_text


def _recorded_args(cls: type, text: str) -> tuple[Any, ...]:
    """The constructor arguments that give back ``text``: a KeyError's recorded text is the
    ``repr`` of its key (``'no order 9999'``), so its key is that literal when it is one."""
    if issubclass(cls, KeyError):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return (text,)
        if repr(value) == text:
            return (value,)
    return (text,)


def _replayed_class(cls: type[BaseException]) -> type[_Replayed]:
    """``cls`` with ``_Replayed`` mixed in, named as ``cls`` is (one class per recorded class)."""
    with _replayed_lock:
        made = _replayed_classes.get(cls)
        if made is None:
            made = type(
                cls.__name__,
                (cls, _Replayed),
                {"__module__": cls.__module__, "__qualname__": cls.__qualname__},
            )
            _replayed_classes[cls] = made
        return made  # type: ignore[return-value]


def normalize_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as JSON values (tuples become lists, objects their JSON form)."""
    try:
        value = orjson.loads(orjson.dumps(arguments, default=json_default))
    except TypeError:
        value = {"value": repr(arguments)}
    return value if isinstance(value, dict) else {"value": value}


def arguments_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same keys and equal values (numbers by value)."""
    return values_match(a, b) and values_match(b, a)


def render_call(tool: str, arguments: dict[str, Any], limit: int = 160) -> str:
    """``tool({"arg": value})`` on one line, clipped."""
    args = orjson.dumps(arguments, default=str, option=orjson.OPT_SORT_KEYS).decode()
    return clip(f"{tool}({args})", limit)


def recorded_value(call: ToolCallRecord, encoding: str | None = None) -> Any:
    """What a recorded call gives back. ``encoding`` is how the SDK recorded the result: "json"
    (the tool returned a structure or number: decode it), "text" (a string: as is). Unknown
    (a recording from other instrumentation): a JSON object or array is decoded, other text kept."""
    text = call.result
    if encoding == "text":
        return text
    stripped = text.strip()
    if encoding == "json" or stripped[:1] in ("{", "["):
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:  # cut by the size cap, or not JSON after all
            pass
    return text


class RecordedTools:
    """The interceptor of one replayed case: answers from ``calls`` and keeps the report."""

    def __init__(
        self,
        calls: Sequence[ToolCallRecord],
        match: ToolMatch = "strict",
        *,
        live_tools: bool = False,
        has_recording: bool = True,
        encodings: Sequence[str | None] | None = None,
        required: int | None = None,
        run_all_live: bool = False,
    ) -> None:
        if match not in TOOL_MATCHES:
            raise ValueError(f"tool match must be strict or fifo, not {match!r}")
        self.calls = list(calls)
        self.match: ToolMatch = match
        self.live_tools = live_tools
        self.has_recording = has_recording
        #: calls from this index on (a sub-run's) are not reported when the replay never
        #: makes them (answering the agent-as-tool call itself means its tools never run)
        self.required = len(self.calls) if required is None else required
        self._encodings = list(encodings or []) + [None] * (len(self.calls) - len(encodings or []))
        self._arguments = [normalize_arguments(c.arguments) for c in self.calls]
        self._used = [False] * len(self.calls)
        self._lock = threading.Lock()
        self._answered = 0
        self._seen: Counter[str] = Counter()
        self._drift: list[ArgumentDrift] = []
        self._unanswered: list[UnansweredCall] = []
        #: a fork (``--llm-until N``): whether the replay is past round N; before it no tool
        #: runs live whatever ``live_tools`` says (the recorded part stays airtight)
        self.live_gate: Callable[[], bool] | None = None
        #: ``--llm recorded --live-tools``: every tool runs for real (its result is compared
        #: with the recorded one afterwards), not only the calls no recording answers
        self.run_all_live = run_all_live
        self._ran_live = 0

    def may_run_live(self) -> bool:
        """``live_tools``, and past the fork when the replay is one."""
        return self.live_tools and (self.live_gate is None or self.live_gate())

    def __call__(self, tool_name: str, arguments: dict[str, Any], /) -> Any:
        args = normalize_arguments(arguments)
        with self._lock:
            self._seen[tool_name] += 1
            index = self._find(tool_name, args)
            if self.run_all_live and self.may_run_live():
                if index is not None:
                    self._used[index] = True
                self._ran_live += 1
                return RUN_LIVE
            if index is None:
                reason = self.no_recording_message(tool_name, args)
                live = self.may_run_live()
                self._unanswered.append(
                    UnansweredCall(tool=tool_name, arguments=args, live=live, reason=reason)
                )
                if live:
                    return RUN_LIVE
                raise NoRecordingError(reason)
            self._used[index] = True
            self._answered += 1
            call = self.calls[index]
        if call.error is not None:
            raise recorded_exception(call.error)
        return recorded_value(call, self._encodings[index])

    def seen_tools(self) -> Counter[str]:
        """How many calls of each tool reached the interceptor (answered or not)."""
        with self._lock:
            return Counter(self._seen)

    def _find(self, tool_name: str, args: dict[str, Any]) -> int | None:
        """The recording answering the call (marking drift on the way), or None."""
        same_name = [
            i for i, c in enumerate(self.calls) if not self._used[i] and c.tool_name == tool_name
        ]
        if not same_name:
            return None
        for i in same_name:
            if arguments_equal(self._arguments[i], args):
                return i
        # drift: the same tool with other arguments
        if self.match == "fifo":
            chosen = same_name[0]
        else:
            chosen = min(same_name, key=lambda i: len(self._differences(i, args)))
        self._drift.append(
            ArgumentDrift(
                tool=tool_name,
                arguments=args,
                recorded_position=chosen,
                recorded_arguments=self._arguments[chosen],
                differences=self._differences(chosen, args),
                answered=self.match == "fifo",
            )
        )
        return chosen if self.match == "fifo" else None

    def _differences(self, index: int, args: dict[str, Any]) -> list[str]:
        return argument_changes(self._arguments[index], args)

    def no_recording_message(self, tool_name: str, args: dict[str, Any]) -> str:
        """Why a call got no answer, naming the tool and its arguments."""
        call = render_call(tool_name, args)
        if not self.has_recording:
            return (
                f"no recording for tool call {call}: the case has no source run "
                "(pass --live-tools to run its tools)"
            )
        recorded = [
            render_call(c.tool_name, self._arguments[i], 100)
            for i, c in enumerate(self.calls)
            if c.tool_name == tool_name
        ]
        if not recorded:
            return f"no recording for tool call {call}: the source run never called {tool_name}"
        unused = [
            i for i, c in enumerate(self.calls) if c.tool_name == tool_name and not self._used[i]
        ]
        if not unused:
            return (
                f"no recording for tool call {call}: the source run called {tool_name} "
                f"{len(recorded)} time(s) and the replay used every one"
            )
        closest = min(unused, key=lambda i: len(self._differences(i, args)))
        changes = "; ".join(self._differences(closest, args)[:4])
        return (
            f"no recording for tool call {call}: {tool_name} was recorded with other arguments "
            f"({changes}; recorded {render_call(tool_name, self._arguments[closest], 100)}, "
            f"--tool-match {self.match})"
        )

    def report(self) -> ReplayReport:
        """The drift, unanswered and unused calls so far."""
        with self._lock:
            return ReplayReport(
                tool_match=self.match,
                has_recording=self.has_recording,
                answered=self._answered,
                tools_live=self._ran_live,
                drift=list(self._drift),
                unanswered=list(self._unanswered),
                unused=[
                    RecordedCallRef(position=i, tool=c.tool_name, arguments=self._arguments[i])
                    for i, c in enumerate(self.calls)
                    if not self._used[i] and i < self.required
                ],
            )


def replay_error_reason(report: ReplayReport) -> str | None:
    """The case's ERROR reason when some tool call had no recording (None otherwise)."""
    missing = report.missing
    if not missing:
        return None
    first = missing[0]
    text = first.reason or f"no recording for tool call {render_call(first.tool, first.arguments)}"
    if len(missing) > 1:
        text += f" (and {len(missing) - 1} more unanswered call(s))"
    return text
