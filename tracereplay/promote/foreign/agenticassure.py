"""AgenticAssure 0.4.0 suite files as tracereplay suites, scored the way AgenticAssure scores.

The file (what ``agenticassure run`` loads; JSON of the same shape is read too)::

    suite:                      # optional; without it the suite is named after the file
      name: support-smoke
      description: ...
      config: {default_timeout: 30, retries: 1, default_scorers: [passfail], fail_fast: false}
    scenarios:
      - name: weather_lookup
        input: What is the weather in London?
        expected_output: weather
        expected_tools: [get_weather]
        expected_tool_args: {get_weather: {location: London}}
        tags: [tools]
        metadata: {regex_pattern: '\\d+ degrees'}
        scorers: [passfail, regex]
        timeout_seconds: 60

One case per scenario: ``input`` is the query; ``expected_tools`` and ``expected_tool_args``
become ``expected_tool_calls``; the scenario's scorers (``passfail`` when it names none: AgenticAssure
0.4.0 does not apply ``default_scorers`` to scenarios) become the case's checks:

- ``passfail`` -> ``passfail`` (the same rule, see ``tracereplay.checks.passfail``)
- ``exact`` -> ``exact`` with ``normalize: [strip, lower]``, or ``[]`` when ``metadata.exact_normalize`` is false
- ``regex`` -> ``regex`` with ``pattern: metadata.regex_pattern`` (no flags, ``re.search``)
- ``similarity`` -> ``similarity`` with ``backend: embedding`` (all-MiniLM-L6-v2, the model
  AgenticAssure loads) and ``threshold: metadata.similarity_threshold`` (0.7 by default)

The suite's ``config`` becomes its eval defaults (``metadata.eval_defaults``), its
``default_scorers`` its checks (for cases added later). What tracereplay has no field for (the
scenario's name, description, id, timeout, scorers as written) is kept in the case's metadata
under ``agenticassure``, so ``eval --format agenticassure-json`` can give scenarios back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tracereplay.models import CheckSpec, EvalCase, EvalExpectedToolCall, EvalSuite
from tracereplay.promote.checks import check_problems
from tracereplay.promote.foreign import ForeignSuite, Path_, as_uuid, one_line_name
from tracereplay.promote.suite_file import (
    ParsedCase,
    ParsedSuite,
    Problem,
    unknown_fields,
    validation_message,
)

#: metadata key of what AgenticAssure has and tracereplay keeps aside
META = "agenticassure"
#: a pattern that matches nothing: the regex scorer of a scenario without a usable pattern
NEVER = "(?!)"

_SUITE_KEYS = ("name", "description", "config")
_CONFIG_KEYS = ("default_timeout", "retries", "default_scorers", "fail_fast")
_SCENARIO_KEYS = (
    "id", "name", "input", "description", "expected_output", "expected_tools",
    "expected_tool_args", "tags", "metadata", "scorers", "timeout_seconds",
)  # fmt: skip
_KNOWN_SCORERS = ("passfail", "exact", "regex", "similarity")


def convert(
    data: dict[str, Any], source: str, name: str | None, problems: list[Problem]
) -> ForeignSuite | None:
    """The suite and its cases; problems are appended (with field paths) instead of raised."""
    notes: list[str] = []
    unknown_fields(data, ("suite", "scenarios"), (), problems)
    info = data.get("suite", {})
    if not isinstance(info, dict):
        problems.append(Problem(("suite",), "must be a mapping with 'name'"))
        info = {}
    unknown_fields(info, _SUITE_KEYS, ("suite",), problems)
    config = info.get("config", {})
    if not isinstance(config, dict):
        problems.append(Problem(("suite", "config"), "must be a mapping"))
        config = {}
    defaults = _eval_defaults(config, problems)

    suite_name = name or info.get("name")
    if suite_name is None and "suite" in data:
        problems.append(Problem(("suite", "name"), "missing (required)"))
    if suite_name is None:
        suite_name = Path(source).stem if source not in ("-", "<stdin>") else "agenticassure"
    if not isinstance(suite_name, str) or not suite_name.strip():
        problems.append(Problem(("suite", "name"), "must be a non-blank string"))
        suite_name = "agenticassure"
    description = info.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(Problem(("suite", "description"), "must be a string"))
        description = None

    default_scorers = config.get("default_scorers", ["passfail"])
    suite_checks: list[CheckSpec] = []
    if _strings(default_scorers, ("suite", "config", "default_scorers"), problems):
        for scorer in default_scorers:
            if scorer == "regex":
                notes.append(
                    "default scorer 'regex' needs a scenario's regex_pattern: "
                    "it is not one of the suite's checks"
                )
                continue
            spec = _scorer_check(scorer, {}, ("suite", "config", "default_scorers"), problems)
            if spec is not None and spec not in suite_checks:
                suite_checks.append(spec)

    suite_meta: dict[str, Any] = {}
    if defaults:
        suite_meta["eval_defaults"] = defaults
    suite_meta[META] = {k: config[k] for k in _CONFIG_KEYS if k in config}
    try:
        suite = EvalSuite(
            name=one_line_name(suite_name),
            description=description or "",
            checks=suite_checks,
            metadata=suite_meta,
        )
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem(("suite", *err["loc"]), validation_message(err)))
        return None

    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        problems.append(Problem(("scenarios",), "must be a list of at least one scenario"))
        return None
    cases: list[ParsedCase] = []
    for index, raw in enumerate(scenarios):
        parsed = _case(raw, index, suite, problems, notes)
        if parsed is not None:
            cases.append(parsed)
    _check_specs(cases, suite, problems)
    if problems:
        return None
    parsed_suite = ParsedSuite(
        suite=suite, cases=cases, id_given=False, created_at_given=False, updated_at_given=False
    )
    return ForeignSuite(parsed_suite, "agenticassure", notes)


def _eval_defaults(config: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """``config`` as eval defaults: ``timeout`` (seconds), ``retries``, ``fail_fast``."""
    out: dict[str, Any] = {}
    path: Path_ = ("suite", "config")
    unknown_fields(config, _CONFIG_KEYS, path, problems)
    timeout = config.get("default_timeout")
    if timeout is not None:
        if not _number(timeout) or timeout <= 0:
            problems.append(Problem((*path, "default_timeout"), "must be a positive number"))
        else:
            out["timeout"] = float(timeout)
    retries = config.get("retries")
    if retries is not None:
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            problems.append(Problem((*path, "retries"), "must be a whole number, 0 or more"))
        else:
            out["retries"] = retries
    fail_fast = _yaml11_bool(config.get("fail_fast"))
    if fail_fast is not None:
        if not isinstance(fail_fast, bool):
            problems.append(Problem((*path, "fail_fast"), "must be true or false"))
        else:
            out["fail_fast"] = fail_fast
    return out


def _case(
    raw: Any, index: int, suite: EvalSuite, problems: list[Problem], notes: list[str]
) -> ParsedCase | None:
    path: Path_ = ("scenarios", index)
    if not isinstance(raw, dict):
        problems.append(Problem(path, "a scenario must be a mapping with 'name' and 'input'"))
        return None
    before = len(problems)
    unknown_fields(raw, _SCENARIO_KEYS, path, problems, listed=_SCENARIO_KEYS[1:])
    for key in ("name", "input"):
        if key not in raw:
            problems.append(Problem((*path, key), "missing (required)"))
        elif not isinstance(raw[key], str):
            problems.append(Problem((*path, key), "must be a string"))
    for key in ("description", "expected_output"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            problems.append(Problem((*path, key), "must be a string"))
    tools = raw.get("expected_tools")
    if tools is not None:
        _strings(tools, (*path, "expected_tools"), problems)
    tool_args = raw.get("expected_tool_args")
    if tool_args is not None and not isinstance(tool_args, dict):
        problems.append(
            Problem((*path, "expected_tool_args"), "must be a mapping of tool name to arguments")
        )
    elif tool_args:
        for tool, args in tool_args.items():
            if not isinstance(args, dict):
                problems.append(
                    Problem(
                        (*path, "expected_tool_args", tool), "must be a mapping of argument values"
                    )
                )
    tags = raw.get("tags", [])
    _strings(tags, (*path, "tags"), problems)
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        problems.append(Problem((*path, "metadata"), "must be a mapping"))
        metadata = {}
    scorers = raw.get("scorers", ["passfail"])
    _strings(scorers, (*path, "scorers"), problems)
    timeout = raw.get("timeout_seconds")
    if timeout is not None and (not _number(timeout) or timeout <= 0):
        problems.append(Problem((*path, "timeout_seconds"), "must be a positive number"))
    if len(problems) > before:
        return None

    checks: list[CheckSpec] = []
    for scorer in scorers:
        spec = _scorer_check(scorer, metadata, (*path, "scorers"), problems, notes, raw["name"])
        if spec is not None and spec not in checks:  # a scorer named twice: scored once
            checks.append(spec)
    if not scorers:
        notes.append(
            f"scenario {raw['name']!r} has no scorers: AgenticAssure fails it, tracereplay "
            "makes it an ERROR (no checks)"
        )

    expected: list[EvalExpectedToolCall] = []
    named: set[str] = set()
    for tool in tools or []:
        if tool in named:
            continue
        named.add(tool)
        expected.append(EvalExpectedToolCall(name=tool, arguments=(tool_args or {}).get(tool)))
    for tool, args in (tool_args or {}).items():
        if tool not in named:
            named.add(tool)
            expected.append(EvalExpectedToolCall(name=tool, arguments=args))

    kept: dict[str, Any] = {"name": raw["name"]}
    for key in ("id", "description", "timeout_seconds", "scorers", "expected_tools"):
        if key in raw:
            kept[key] = raw[key]
    if tool_args is not None:
        kept["expected_tool_args"] = tool_args
    case_id = as_uuid(raw.get("id"))
    try:
        case = EvalCase(
            **({"id": case_id} if case_id else {}),
            suite_id=suite.id,
            seq=index,
            query=raw["input"],
            expected_output=raw.get("expected_output"),
            expected_tool_calls=expected,
            checks=None if checks == suite.checks else checks,
            tags=list(tags),
            metadata={**metadata, META: kept},
        )
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple("input" if p == "query" else p for p in err["loc"])
            problems.append(Problem((*path, *loc), validation_message(err)))
        return None
    return ParsedCase(case, id_given=case_id is not None, seq_given=True, path=path)


def scorer_check(scorer: str, metadata: dict[str, Any]) -> CheckSpec:
    """The check standing for an AgenticAssure scorer on a scenario with ``metadata``."""
    problems: list[Problem] = []
    spec = _scorer_check(scorer, metadata, (), problems)
    if spec is None:
        raise ValueError(problems[0].message)
    return spec


def _scorer_check(
    scorer: str,
    metadata: dict[str, Any],
    path: Path_,
    problems: list[Problem],
    notes: list[str] | None = None,
    scenario: str = "",
) -> CheckSpec | None:
    if scorer == "passfail":
        return CheckSpec(kind="passfail")
    if scorer == "exact":
        normalize = (
            ["strip", "lower"] if _yaml11_bool(metadata.get("exact_normalize", True)) else []
        )
        return CheckSpec(kind="exact", normalize=normalize)
    if scorer == "regex":
        pattern = metadata.get("regex_pattern")
        why = None
        if pattern is None:
            why = "has no metadata.regex_pattern"
        elif not isinstance(pattern, str):
            why = "has a regex_pattern that is not a string"
        else:
            try:
                re.compile(pattern)
            except re.error as exc:
                why = f"has an invalid regex_pattern ({exc})"
        if why is not None:
            if notes is not None:
                notes.append(
                    f"scenario {scenario!r} {why}: AgenticAssure fails its regex scorer every "
                    "time, and so does the imported check"
                )
            return CheckSpec(kind="regex", pattern=NEVER)
        return CheckSpec(kind="regex", pattern=pattern)
    if scorer == "similarity":
        threshold = metadata.get("similarity_threshold", 0.7)
        if not _number(threshold) or not 0.0 <= threshold <= 1.0:
            problems.append(
                Problem(
                    (*path[:-1], "metadata", "similarity_threshold"),
                    "must be a number from 0 to 1",
                )
            )
            return None
        return CheckSpec(kind="similarity", backend="embedding", threshold=float(threshold))
    spec = CheckSpec(kind=scorer) if _is_kind_name(scorer) else None
    if spec is None or check_problems([spec]):
        problems.append(
            Problem(
                path,
                f"scorer {scorer!r} is not one of {', '.join(_KNOWN_SCORERS)} nor a check kind "
                "tracereplay knows (a custom one: give its module with --checks-module)",
            )
        )
        return None
    return spec


def _check_specs(cases: list[ParsedCase], suite: EvalSuite, problems: list[Problem]) -> None:
    """Two scorers of one name on one scenario are two checks of one label: not storable.
    The suite's own checks (those of every scenario that keeps the default scorers) are
    looked at once, and their problems told at each scenario that uses them."""
    suite_problems = check_problems(suite.checks)
    for p in cases:
        found = check_problems(p.case.checks) if p.case.checks is not None else suite_problems
        for sub, message in found:
            problems.append(Problem((*p.path, "scorers", *sub[:1]), message))


def _is_kind_name(value: str) -> bool:
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9_.\-]*$", value))


#: the words YAML 1.1 reads as booleans (suite files are YAML 1.2, where they are text)
_YAML11_BOOLS = {
    word: value
    for words, value in (("yes on true", True), ("no off false", False))
    for base in words.split()
    for word in (base, base.capitalize(), base.upper())
}


def _yaml11_bool(value: Any) -> Any:
    """A boolean option as AgenticAssure reads it: its files are read by PyYAML (YAML 1.1),
    where ``yes``/``no``/``on``/``off`` are booleans; other values are given back unchanged."""
    return _YAML11_BOOLS.get(value, value) if isinstance(value, str) else value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any, path: Path_, problems: list[Problem]) -> bool:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(Problem(path, "must be a list of strings"))
        return False
    return True
