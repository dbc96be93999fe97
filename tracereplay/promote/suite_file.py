"""Suites as files (YAML or JSON): writing them, and reading them back with every problem found.

A file is one mapping: ``format`` (``tracereplay-suite/1``), the suite's fields (``id``,
``name``, ``description``, ``agent_name``, ``required_parameters``, ``checks``, ``metadata``,
``created_at``, ``updated_at``) and ``cases``, a list of case mappings (the ``EvalCase`` fields
without ``suite_id``). Fields at their default are left out when writing. Reading is lossless
for what writing produced; by hand, ``id``/``seq``/timestamps may be left out and a case's
``context`` may be a string (plain text or document blocks, see ``documents``).
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ValidationError

from tracereplay.errors import TraceReplayError
from tracereplay.models import CheckSpec, EvalCase, EvalSuite
from tracereplay.promote import yaml_load
from tracereplay.promote.checks import check_problems
from tracereplay.promote.documents import DocumentFormatError, parse_documents
from tracereplay.promote.suite_guard import GuardProblem, check_depth, check_nodes, deep_line
from tracereplay.store.suites import check_to_dict

if TYPE_CHECKING:  # PyYAML loads when a file is written or a line is to be found: reading
    import yaml  # a file is yaml-rs's (yaml_load), and PyYAML costs a hundredth of a second

FORMAT = "tracereplay-suite/1"
FileFormat = Literal["yaml", "json"]
Path_ = tuple[int | str, ...]

_SUITE_KEYS = (
    "id", "name", "description", "agent_name", "required_parameters", "checks", "metadata",
    "created_at", "updated_at",
)  # fmt: skip
_CASE_KEYS = tuple(k for k in EvalCase.model_fields if k != "suite_id")
_CASE_KEY_SET = frozenset(_CASE_KEYS)
_LINE_BREAKS = frozenset("\r\x85\u2028\u2029")
#: plain text a YAML 1.2 reader may take for a number, a boolean or null (a superset)
_MAYBE_12_SCALAR = re.compile(r"[-+.~0-9]|(?:null|true|false)$", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where (field path, line when known) and what."""

    path: Path_
    message: str
    line: int | None = None

    def render(self, source: str) -> str:
        where = f"{source}:{self.line}" if self.line else source
        field_path = format_path(self.path)
        return (
            f"{where}: {field_path}: {self.message}" if field_path else f"{where}: {self.message}"
        )


def unknown_fields(
    mapping: Any,
    known: Sequence[str],
    path: Path_,
    problems: list[Problem],
    *,
    listed: Sequence[str] | None = None,
) -> None:
    """A problem at ``path + (key,)`` for each key of ``mapping`` not in ``known``; the message
    lists ``listed`` (default: ``known``) as the fields known."""
    names = ", ".join(known if listed is None else listed)
    for key in mapping:
        if key not in known:
            problems.append(Problem((*path, key), f"unknown field (known: {names})"))


class SuiteFileError(TraceReplayError):
    """A suite file with problems; ``problems`` lists each one, ``str()`` sums them up."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = list(problems)
        count = len(self.problems)
        first = self.problems[0].render(source) if count == 1 else f"{source}: {count} problems"
        super().__init__(f"{first} (nothing was changed)")

    def lines(self) -> list[str]:
        """Each problem on its own line, ``FILE:LINE: path: message``."""
        return [p.render(self.source) for p in self.problems]


@dataclass
class ParsedCase:
    """A case read from a file, with which of its identity fields the file gave."""

    case: EvalCase
    id_given: bool
    seq_given: bool
    path: Path_


@dataclass
class ParsedSuite:
    """A suite file read and validated (still only in memory)."""

    suite: EvalSuite
    cases: list[ParsedCase]
    id_given: bool
    created_at_given: bool
    updated_at_given: bool
    locate: Callable[[Path_], int | None] = field(repr=False, default=lambda _p: None)
    #: the file's values as read (the import command keeps them, with the cases, for the
    #: process's end to free: ``cli.lifetime.keep_until_exit``)
    data: Any = field(repr=False, compare=False, default=None)


# ---------------------------------------------------------------------- writing
def suite_to_dict(suite: EvalSuite, cases: Sequence[EvalCase]) -> dict[str, Any]:
    """The file form of a suite and its cases (defaults left out, cases in ``seq`` order)."""
    data: dict[str, Any] = {"format": FORMAT}
    data.update(_without_defaults(suite, _SUITE_KEYS))
    if suite.checks:
        data["checks"] = [check_to_dict(c) for c in suite.checks]
    data["cases"] = [case_to_dict(c) for c in sorted(cases, key=lambda c: c.seq)]
    return data


def dump_suite(suite: EvalSuite, cases: Sequence[EvalCase], fmt: FileFormat = "yaml") -> str:
    """The text of a suite file; ``load_suite`` reads it back to the same suite and cases."""
    return dump_data(suite_to_dict(suite, cases), fmt)


def dump_case(case: EvalCase, fmt: FileFormat = "yaml") -> str:
    """One case as it appears in a suite file (without its suite)."""
    return dump_data(case_to_dict(case), fmt)


def dump_data(data: Any, fmt: FileFormat = "yaml") -> str:
    """JSON (2-space indent) or YAML (text blocks for multi-line strings) text for ``data``."""
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    import yaml

    return yaml.dump(data, Dumper=_dumper(), allow_unicode=True, sort_keys=False, width=1 << 30)


def case_to_dict(case: EvalCase) -> dict[str, Any]:
    """A case's file form: its fields except ``suite_id``, defaults left out."""
    data = _without_defaults(case, _CASE_KEYS)
    for call in data.get("expected_tool_calls", []):
        if call["arguments"] is None:  # the default: any arguments
            del call["arguments"]
    if case.checks is not None:
        data["checks"] = [check_to_dict(c) for c in case.checks]
    return data


def _without_defaults(model: BaseModel, keys: Sequence[str]) -> dict[str, Any]:
    """``keys`` of the model's JSON form, leaving out those at their default (never id or seq)."""
    dumped = model.model_dump(mode="json")
    defaults = _defaults(type(model))
    return {
        key: dumped[key]
        for key in keys
        if key in ("id", "seq", "name", "query") or dumped[key] != defaults[key]
    }


@functools.cache
def _defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """Each field's default in JSON form (factories called once; id is never compared)."""
    return {
        key: _jsonable(info.get_default(call_default_factory=True))
        for key, info in cls.model_fields.items()
        if key != "id"
    }


def _jsonable(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _loader() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader (libyaml's when PyYAML was built with it): the suite guard's nodes,
    and the lines of fields."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _dumper() -> type[yaml.SafeDumper]:
    """Multi-line text as ``|`` blocks where YAML keeps them exact; no aliases (libyaml's
    dumper when PyYAML was built with it)."""
    import yaml

    class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    _Dumper.add_representer(str, _represent_str)
    return _Dumper


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _LINE_BREAKS & set(value):  # YAML folds these in plain and block text: escape them
        style: str | None = '"'
    elif "\n" in value:
        style = "|"
    else:
        # PyYAML quotes the text YAML 1.1 would read as something else; the reader is YAML
        # 1.2, which also reads 0o17, 1e3 and the like as numbers: those are quoted too
        style = "'" if _MAYBE_12_SCALAR.match(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


# ---------------------------------------------------------------------- reading
def detect_format(name: str, text: str) -> FileFormat:
    """``json`` for ``.json`` files (or text starting with ``{``), else ``yaml``."""
    suffix = Path(name).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return "json" if text.lstrip().startswith("{") else "yaml"


def load_suite(text: str, fmt: FileFormat, source: str = "<suite>") -> ParsedSuite:
    """Read and validate a suite file; ``SuiteFileError`` lists every problem found."""
    data, problems, locate = _parse(text, fmt)
    if data is None and problems:
        raise SuiteFileError(source, problems)
    parsed, found = _validate(data)
    problems.extend(Problem(p.path, p.message, locate(p.path)) for p in found)
    if problems:
        raise SuiteFileError(source, sorted(problems, key=_order))
    assert parsed is not None
    parsed.locate = locate
    parsed.data = data
    return parsed


def load_checks(text: str, fmt: FileFormat, source: str = "<checks>") -> list[CheckSpec]:
    """Check definitions from a file: a list of checks, or a mapping with a ``checks`` list."""
    data, problems, locate = _parse(text, fmt)
    if data is None and problems:
        raise SuiteFileError(source, problems)
    base: Path_ = ()
    if isinstance(data, dict) and "checks" in data:
        data, base = data["checks"], ("checks",)
    checks, found = _checks(data, base)
    problems.extend(Problem(p.path, p.message, locate(p.path)) for p in found)
    if problems:
        raise SuiteFileError(source, sorted(problems, key=_order))
    return checks


def _order(problem: Problem) -> tuple[int, str]:
    return (problem.line or 0, format_path(problem.path))


Locate = Callable[[Path_], "int | None"]


def _parse(text: str, fmt: FileFormat) -> tuple[Any, list[Problem], Locate]:
    """The data, syntax problems (duplicate keys included) and a field path -> line lookup;
    a file past the limits of ``suite_guard`` is one problem and no data."""
    try:
        data, problems, locate = _parse_text(text, fmt)
    except GuardProblem as exc:
        return None, [Problem((), exc.message, exc.line)], _no_lines
    except RecursionError:
        message = "values are nested too deeply"
        return None, [Problem((), message, deep_line(text))], _no_lines
    if data is not None:
        deep = check_depth(data)
        if deep is not None:
            import yaml

            try:
                line = locate(tuple(deep))
            except (RecursionError, yaml.YAMLError):
                line = None
            message = "values are nested too deeply (64 levels at most)"
            return None, [Problem((), message, line or deep_line(text))], _no_lines
    return data, problems, locate


def _parse_text(text: str, fmt: FileFormat) -> tuple[Any, list[Problem], Locate]:
    if fmt == "json":
        return _parse_json(text)
    try:
        data = yaml_load.load(text)
    except yaml_load.YamlSyntaxError as exc:
        # PyYAML's pass names the problem the way suite files always did (a key given twice
        # with its line, and its data to find the other problems; the guard's refusals);
        # yaml-rs's own reason when PyYAML finds nothing wrong
        pyyaml_data, problems, locate = _parse_nodes(text)
        if problems:
            return pyyaml_data, problems, locate
        return None, [Problem((), f"not valid YAML: {exc.reason}", exc.line)], _no_lines
    if yaml_load.needs_node_check(text):  # a tag, an anchor or a document marker
        _, problems, locate = _parse_nodes(text, construct=False)
        if problems:
            return None, problems, _no_lines
        return data, [], locate
    return data, [], _lazy_locator(text)


def _parse_nodes(text: str, *, construct: bool = True) -> tuple[Any, list[Problem], Locate]:
    """PyYAML's nodes of the text, checked by the suite guard (raises ``GuardProblem``), with
    each field's line and the keys given twice; the data built from them when ``construct``."""
    import yaml

    try:
        node = yaml.compose(text, Loader=_loader())
    except yaml.YAMLError as exc:
        return None, [_yaml_problem("not valid YAML", exc)], _no_lines
    if node is None:
        return None, [], _no_lines
    check_nodes(node)  # before anything expands its aliases
    lines: dict[Path_, int] = {}
    problems: list[Problem] = []
    _walk(node, (), lines, problems)
    if not construct:
        return None, problems, _locator(lines)
    try:
        data = _loader()(text).construct_document(node)
    except yaml.YAMLError as exc:
        return None, [_yaml_problem("not plain YAML data", exc)], _no_lines
    return data, problems, _locator(lines)


def _yaml_problem(what: str, exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    reason = " ".join(str(getattr(exc, "problem", None) or exc).split())
    return Problem((), f"{what}: {reason}", mark.line + 1 if mark is not None else None)


def _parse_json(text: str) -> tuple[Any, list[Problem], Locate]:
    """JSON is read with ``json``; the lines of its fields (a YAML pass over the same text) are
    only worked out when there is a problem to place."""
    duplicated = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicated
        out = dict(items)
        duplicated = duplicated or len(out) != len(items)
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        return (
            None,
            [Problem((), f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno)],
            _no_lines,
        )
    lines: dict[Path_, int] | None = None
    found: list[Problem] = []

    def locate(path: Path_) -> int | None:
        nonlocal lines
        if lines is None:
            import yaml

            lines = {}
            try:
                node = yaml.compose(text, Loader=_loader())
            except yaml.YAMLError:  # JSON that YAML 1.1 does not read: paths only
                node = None
            if node is not None:
                _walk(node, (), lines, found)
        return _locator(lines)(path)

    problems: list[Problem] = []
    if duplicated:
        locate(())
        problems = found or [Problem((), "a key is given twice in one object")]
    return data, problems, locate


def _lazy_locator(text: str) -> Locate:
    """Field path -> line, worked out (a PyYAML pass) only when a problem is to be placed."""
    lines: dict[Path_, int] | None = None

    def locate(path: Path_) -> int | None:
        nonlocal lines
        if lines is None:
            import yaml

            lines = {}
            try:
                node = yaml.compose(text, Loader=_loader())
            except yaml.YAMLError:  # YAML 1.2 that PyYAML (1.1) does not read: paths only
                node = None
            if node is not None:
                _walk(node, (), lines, [])
        return _locator(lines)(path)

    return locate


def _no_lines(path: Path_) -> int | None:
    return None


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int], problems: list[Problem]) -> None:
    import yaml

    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            child = (*path, key)
            if key in seen:
                problems.append(
                    Problem(child, "this key is given twice", key_node.start_mark.line + 1)
                )
            seen.add(key)
            lines[child] = key_node.start_mark.line + 1
            _walk(value_node, child, lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, problems)


def _locator(lines: dict[Path_, int]) -> Callable[[Path_], int | None]:
    def locate(path: Path_) -> int | None:
        for end in range(len(path), -1, -1):
            if path[:end] in lines:
                return lines[path[:end]]
        return None

    return locate


def _validate(data: Any) -> tuple[ParsedSuite | None, list[Problem]]:
    if not isinstance(data, dict):
        return None, [Problem((), "a suite file must be a mapping with 'name' and 'cases'")]
    problems: list[Problem] = []
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        problems.append(
            Problem(("format",), f"unknown format {fmt!r} (this tracereplay reads {FORMAT!r})")
        )
    unknown_fields(
        data, (*_SUITE_KEYS, "format", "cases"), (), problems, listed=(*_SUITE_KEYS, "cases")
    )
    suite_data = {k: data[k] for k in _SUITE_KEYS if k in data and k != "checks"}
    id_given = "id" in data
    suite_data.setdefault("id", str(uuid.uuid4()))
    suite = _model(EvalSuite, suite_data, (), problems)
    checks, found = _checks(data.get("checks", []), ("checks",))
    problems.extend(found)
    suite_id = suite.id if suite is not None else str(uuid.uuid4())
    cases = _cases(data.get("cases", []), suite_id, problems)
    if "cases" not in data:
        problems.append(Problem(("cases",), "missing: give the cases as a list (may be empty: [])"))
    if problems or suite is None:
        return None, problems
    suite.checks = checks
    return (
        ParsedSuite(
            suite=suite,
            cases=cases,
            id_given=id_given,
            created_at_given="created_at" in data,
            updated_at_given="updated_at" in data,
        ),
        [],
    )


def _cases(raw: Any, suite_id: str, problems: list[Problem]) -> list[ParsedCase]:
    if not isinstance(raw, list):
        problems.append(Problem(("cases",), "must be a list of cases"))
        return []
    parsed: list[ParsedCase] = []
    for index, item in enumerate(raw):
        path: Path_ = ("cases", index)
        if not isinstance(item, dict):
            problems.append(Problem(path, "a case must be a mapping with at least a 'query'"))
            continue
        data = dict(item)
        if not data.keys() <= _CASE_KEY_SET:  # (one set test for the usual case)
            if "suite_id" in data and str(data.pop("suite_id")).lower() != suite_id:
                problems.append(
                    Problem((*path, "suite_id"), "differs from the suite's id (leave it out)")
                )
            unknown_fields(data, _CASE_KEYS, path, problems)
            data = {k: v for k, v in data.items() if k in _CASE_KEY_SET}
        if isinstance(data.get("context"), str):
            try:
                data["context"] = [d.to_dict() for d in parse_documents(data["context"])]
            except DocumentFormatError as exc:
                problems.append(Problem((*path, "context"), str(exc)))
                data.pop("context")
        raw_checks = data.pop("checks", None)
        if raw_checks is not None:
            checks, found = _checks(raw_checks, (*path, "checks"))
            problems.extend(found)
            if not found:
                data["checks"] = checks  # validated in the case (no assignment to validate)
        id_given, seq_given = "id" in data, "seq" in data
        if not id_given:  # not setdefault: that would make a UUID for every case
            data["id"] = str(uuid.uuid4())
        data.setdefault("seq", 0)
        data["suite_id"] = suite_id
        case = _model(EvalCase, data, path, problems)
        if case is not None:
            parsed.append(ParsedCase(case, id_given, seq_given, path))
    _storable(raw, parsed, problems)
    _cross_check(parsed, problems)
    next_seq = max((p.case.seq for p in parsed if p.seq_given), default=-1) + 1
    for p in parsed:
        if not p.seq_given:  # a copy with it: an assignment would validate the whole case
            p.case = p.case.model_copy(update={"seq": next_seq})
            next_seq += 1
    return parsed


def _storable(raw: list[Any], parsed: list[ParsedCase], problems: list[Problem]) -> None:
    """A problem for each case the store cannot hold as JSON (an integer past 64 bits...). The
    file's values are tried at once (the cases hold no value the file does not), each case's
    JSON form only when that fails."""
    try:
        orjson.dumps(raw, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        for p in parsed:
            try:
                orjson.dumps(p.case.to_dict())
            except orjson.JSONEncodeError as exc:
                problems.append(Problem(p.path, f"cannot be stored: {exc}"))


def _cross_check(cases: Sequence[ParsedCase], problems: list[Problem]) -> None:
    """Ids, given seqs and source runs must each be unique within the file."""
    firsts: dict[tuple[str, Any], Path_] = {}
    for p in cases:
        keys = [("id", p.case.id)] if p.id_given else []
        if p.seq_given:
            keys.append(("seq", p.case.seq))
        if p.case.source_run_id:
            keys.append(("source_run_id", p.case.source_run_id))
        for name, value in keys:
            first = firsts.setdefault((name, value), p.path)
            if first != p.path:
                problems.append(
                    Problem(
                        (*p.path, name), f"{value!r} is also the {name} of {format_path(first)}"
                    )
                )


def _checks(raw: Any, path: Path_) -> tuple[list[CheckSpec], list[Problem]]:
    if not isinstance(raw, list):
        return [], [Problem(path, "must be a list of checks, each with a 'kind'")]
    problems: list[Problem] = []
    checks: list[CheckSpec] = []
    for index, item in enumerate(raw):
        spec = _model(CheckSpec, item, (*path, index), problems)
        if spec is not None:
            checks.append(spec)
    if len(checks) == len(raw):
        problems.extend(Problem((*path, *p), msg) for p, msg in check_problems(checks))
    return checks, problems


def _model(cls: type[BaseModel], data: Any, path: Path_, problems: list[Problem]) -> Any:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem((*path, *err["loc"]), validation_message(err)))
        return None


def validation_message(err: Any) -> str:
    """A pydantic error as a short user message."""
    if err["type"] == "missing":
        return "missing (required)"
    if err["type"] == "extra_forbidden":
        return "unknown field"
    msg = str(err["msg"])
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def format_path(path: Path_) -> str:
    """``cases[2].expected_tool_calls[0].name`` for ``("cases", 2, "expected_tool_calls", 0, "name")``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
