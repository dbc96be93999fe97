"""Framework adapters as plugins (issue 51): the one answering helper every adapter uses
(``frameworks.base.ask``), registration through the ``tracereplay.frameworks`` entry-point
group (a third-party adapter is tried after tracereplay's own; a broken one stops with a line
naming it), and the framework versions an adapter was tested with."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest

from tracereplay.replay.frameworks import supported_frameworks
from tracereplay.replay.frameworks.base import (
    FrameworkAgent,
    ToolAnswer,
    ask,
    count_answers,
    run_live,
)
from tracereplay.sdk.replay_hook import RUN_LIVE, current_interceptor, tool_interceptor

_answer: ContextVar[ToolAnswer | None] = ContextVar("test_answer", default=None)


class Recorded(RuntimeError):
    pass


class FrameworksOwn(RuntimeError):
    pass


def test_nothing_is_asked_outside_a_replay() -> None:
    asked = ask(_answer, "get_weather", lambda: pytest.fail("arguments read"))
    assert asked.live and not asked.replaying
    assert run_live(asked, lambda: "ran") == "ran"


def test_an_answer_is_marked_and_returned() -> None:
    token = _answer.set(lambda name, args: f"{name}({args['city']})")
    try:
        with count_answers() as counted:
            asked = ask(_answer, "get_weather", {"city": "Paris"})
    finally:
        _answer.reset(token)
    assert (asked.live, asked.value, counted.count) == (False, "get_weather(Paris)", 1)


def test_a_recorded_failure_is_marked_and_raised_as_the_framework_raises_it() -> None:
    def answer(name: str, args: dict[str, Any]) -> Any:
        raise Recorded("no weather station")

    with count_answers() as counted, pytest.raises(FrameworksOwn) as raised:
        ask(answer, "get_weather", {}, failure=lambda exc: FrameworksOwn(str(exc)))
    assert counted.count == 1 and isinstance(raised.value.__cause__, Recorded)
    with pytest.raises(Recorded):
        ask(answer, "get_weather", {})


def test_run_live_runs_the_real_tool_without_asking_again() -> None:
    with tool_interceptor(lambda *a: "answered"), count_answers() as counted:
        asked = ask(lambda name, args: RUN_LIVE, "get_weather", {})
        assert asked.live and asked.replaying and counted.count == 0
        seen = run_live(asked, current_interceptor)
    assert seen is None  # inside the real tool, @tracereplay.tool runs for real


def _dist(tmp: Path, name: str, entry: str, module: str = "", source: str = "") -> Path:
    """A distribution on ``tmp`` (its dist-info and, when given, a module) registering
    ``entry`` under the adapters' group, as a pip-installed plugin package does."""
    info = tmp / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[tracereplay.frameworks]\n{entry}\n")
    if module:
        (tmp / f"{module}.py").write_text(textwrap.dedent(source))
    return tmp


def _run(path: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_a_third_party_adapter_is_registered_by_its_entry_point(tmp_path: Path) -> None:
    path = _dist(
        tmp_path, "tracereplay-thing", "thing = thing_adapter:ThingAgent", "thing_adapter",
        """
        from tracereplay.replay.frameworks.base import FrameworkAgent, mro_names

        class Thing:
            pass

        class ThingAgent(FrameworkAgent):
            framework = "thing"

            @classmethod
            def accepts(cls, obj):
                return "thing_adapter.Thing" in mro_names(obj)

            async def arun(self, query):
                return query

            def intercept(self, answer):
                import contextlib
                return contextlib.nullcontext()
        """,
    )  # fmt: skip
    done = _run(
        path,
        "from tracereplay.replay.frameworks import framework_agent, supported_frameworks\n"
        "import thing_adapter\n"
        "print(supported_frameworks()[0], supported_frameworks()[-1])\n"
        "print(type(framework_agent(thing_adapter.Thing(), 'm:thing')).__name__)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pydantic-ai", "thing", "ThingAgent"]


def test_a_broken_adapter_stops_with_a_line_naming_it(tmp_path: Path) -> None:
    path = _dist(tmp_path, "tracereplay-broken", "broken = no_such_module:Agent")
    done = _run(
        path,
        "from tracereplay.replay.frameworks import AdapterError, adapters\n"
        "try:\n    adapters()\nexcept AdapterError as exc:\n    print(exc)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "the framework adapter 'broken' (no_such_module:Agent) could not be loaded: "
        "No module named 'no_such_module'"
    )


def test_the_built_in_adapters_are_registered() -> None:
    assert supported_frameworks() == [
        "pydantic-ai", "openai-agents", "langgraph", "strands", "google-adk", "crewai",
        "autogen", "agent-framework", "llama-index", "smolagents",
    ]  # fmt: skip


def test_each_framework_forms_module_has_an_owner() -> None:
    """Every framework's payload forms (``convert/forms/<module>``) are owned by the adapter of
    that framework (``conversion_forms``), or the framework has no Python adapter: its agents
    are replayed as commands (the Vercel AI SDK) or through an instrumentation only."""
    import importlib

    from tracereplay.convert.forms import FRAMEWORK_FORMS
    from tracereplay.replay.frameworks import adapters

    owned = {m: cls.framework for cls in adapters() for m in cls.conversion_forms}
    assert set(owned) <= set(FRAMEWORK_FORMS), owned
    assert set(FRAMEWORK_FORMS) - set(owned) == {"vercel_ai"}, owned
    for module in FRAMEWORK_FORMS:
        assert importlib.import_module(f"tracereplay.convert.forms.{module}").__doc__


def test_a_framework_version_outside_the_tested_ones_is_named_in_one_line() -> None:
    installed = importlib.metadata.version("duckdb")

    class Old(FrameworkAgent):
        framework = "duck"
        distribution = "duckdb"
        tested = ("==0.0.*", "==0.1.*")

    class Current(Old):
        tested = ("==0.0.*", f"=={installed}")

    assert Old.version_note() == (
        f"duckdb {installed} is not a version the duck adapter was tested with "
        "(==0.0.* or ==0.1.*): if its replay goes wrong, that may be why"
    )
    assert Current.version_note() is None


class Tool:
    """A framework's tool class, as an adapter patches one."""

    async def invoke(self, city: str, days: int = 3) -> str:
        """The real tool."""
        return f"real {city} {days}"

    @classmethod
    def named(cls, name: str) -> str:
        return name


def test_a_wrapt_patch_keeps_the_signature_and_is_undone_exactly() -> None:
    import asyncio
    import inspect

    from tracereplay.replay.frameworks.base import wrapt_patch

    original, named = vars(Tool)["invoke"], vars(Tool)["named"]

    async def answering(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> str:
        asked = ask(_answer, "invoke", lambda: dict(zip(["city", "days"], args)) | kwargs)
        return asked.value if not asked.live else await wrapped(*args, **kwargs)

    patch = wrapt_patch(lambda: Tool, "invoke", answering)
    token = _answer.set(lambda name, args: f"recorded {args['city']}")
    try:
        with patch.held(), patch.held():  # two replays at once: installed once
            assert inspect.signature(Tool.invoke) == inspect.signature(original)
            assert Tool.invoke.__name__ == "invoke" and Tool.invoke.__doc__ == "The real tool."
            assert inspect.iscoroutinefunction(Tool().invoke)
            assert asyncio.run(Tool().invoke("Paris")) == "recorded Paris"
            with wrapt_patch(lambda: Tool, "named", lambda w, i, a, k: "patched").held():
                assert Tool.named("x") == "patched" and isinstance(vars(Tool)["named"], object)
            assert vars(Tool)["named"] is named
            assert vars(Tool)["invoke"] is not original
    finally:
        _answer.reset(token)
    assert vars(Tool)["invoke"] is original  # the very object that was there
    assert asyncio.run(Tool().invoke("Paris")) == "real Paris 3"
