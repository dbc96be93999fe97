"""Checks on the response text: nonEmpty, containsExpected, exact, regex, keywords, fuzzy."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field
from rapidfuzz import fuzz

from tracereplay.checks.batch import BatchVerdicts, SubjectBatch
from tracereplay.checks.common import NOTHING_EXPECTED, clip, expected_text
from tracereplay.checks.kinds import CheckError, Verdict, batch_form, builtin_check
from tracereplay.checks.subject import CheckSubject

#: containsExpected on a case with no expected text: skipped (it passes, saying so)
SKIPPED_NOTHING_EXPECTED = f"skipped: {NOTHING_EXPECTED}"

Unit = Annotated[float, Field(ge=0.0, le=1.0)]
NormalizeStep = Literal["strip", "case", "lower", "whitespace"]
ALL_STEPS: tuple[NormalizeStep, ...] = ("case", "whitespace", "strip")
_WS = re.compile(r"\s+")


@builtin_check("nonEmpty")
def non_empty(subject: CheckSubject, minLength: Annotated[int, Field(ge=0)] = 1) -> Verdict:
    """The response has at least ``minLength`` characters once stripped."""
    n = len(subject.output.strip())
    passed = n >= minLength
    return Verdict(
        passed,
        1.0 if passed else n / minLength,
        f"response has {n} characters (minimum {minLength})",
        {"length": n, "minLength": minLength},
    )


@batch_form("nonEmpty")
def _non_empty_batch(batch: SubjectBatch, minLength: int = 1) -> BatchVerdicts:
    passed: list[bool | None] = []
    score: list[float] = []
    explanation: list[str] = []
    details: list[dict[str, Any]] = []
    for output in batch.response:
        n = len(output.strip())
        ok = n >= minLength
        passed.append(ok)
        score.append(1.0 if ok else n / minLength)
        explanation.append(f"response has {n} characters (minimum {minLength})")
        details.append({"length": n, "minLength": minLength})
    return BatchVerdicts(passed, score, explanation, details)


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


@builtin_check("containsExpected")
def contains_expected(subject: CheckSubject, caseSensitive: bool = False) -> Verdict:
    """The response contains the expected output; skipped (passes) when nothing is expected:
    a case promoted from a run that failed before answering has no expected text to look for."""
    expected = subject.case.expected_output
    needle = expected.strip() if expected is not None else ""
    if not needle:
        return Verdict(True, 1.0, SKIPPED_NOTHING_EXPECTED, {"skipped": True})
    output = subject.result.response
    found = needle in output if caseSensitive else needle.casefold() in output.casefold()
    if found:
        return Verdict(True, 1.0, f"response contains the expected text {clip(needle)!r}")
    return Verdict(False, 0.0, _not_contained(needle, output))


def _not_contained(needle: str, output: str) -> str:
    """Why containsExpected failed, with the response it looked in (clipped): what the agent
    answered instead is what the reader needs next."""
    said = " ".join(output.split())
    shown = f"the response: {clip(said, 100)!r}" if said else "the response is empty"
    return f"response does not contain the expected text {clip(needle)!r}; {shown}"


@batch_form("containsExpected")
def _contains_expected_batch(batch: SubjectBatch, caseSensitive: bool = False) -> BatchVerdicts:
    needles = [e.strip() if e is not None else "" for e in batch.expected_output]
    if caseSensitive:
        found = [bool(nd) and nd in out for nd, out in zip(needles, batch.response)]
    else:
        found = [
            bool(nd) and nd.casefold() in out.casefold() for nd, out in zip(needles, batch.response)
        ]
    explanation = [
        (f"response contains the expected text {clip(nd)!r}" if ok else _not_contained(nd, out))
        if nd
        else SKIPPED_NOTHING_EXPECTED
        for nd, ok, out in zip(needles, found, batch.response)
    ]
    passed = [ok or not nd for nd, ok in zip(needles, found)]
    return BatchVerdicts(
        passed,  # type: ignore[arg-type]  # list[bool] is a list[bool | None]
        [1.0 if ok else 0.0 for ok in passed],
        explanation,
        [{} if nd else {"skipped": True} for nd in needles],
    )


def normalize_text(text: str, steps: tuple[NormalizeStep, ...] | list[NormalizeStep]) -> str:
    """Apply ``exact``'s normalization: ``case`` (casefold), ``lower`` (``str.lower``, as
    AgenticAssure's exact scorer), ``whitespace`` (collapse runs to one space), ``strip`` (trim
    both ends), in that order whatever order they are listed in."""
    if "case" in steps:
        text = text.casefold()
    if "lower" in steps:
        text = text.lower()
    if "whitespace" in steps:
        text = _WS.sub(" ", text)
    if "strip" in steps:
        text = text.strip()
    return text


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


@builtin_check("exact")
def exact(subject: CheckSubject, normalize: bool | list[NormalizeStep] = ["strip"]) -> Verdict:  # noqa: B006
    """The response equals the expected output after normalization (default: strip)."""
    expected = subject.case.expected_output
    if expected is None:
        return Verdict(False, 0.0, NOTHING_EXPECTED)
    steps: tuple[NormalizeStep, ...] | list[NormalizeStep]
    steps = (ALL_STEPS if normalize else ()) if isinstance(normalize, bool) else normalize
    want = normalize_text(expected, steps)
    got = normalize_text(subject.output, steps)
    if got == want:
        return Verdict(
            True, None, "response equals the expected output", {"normalize": list(steps)}
        )
    at = _first_difference(got, want)
    return Verdict(
        False,
        None,
        f"response differs from the expected output at character {at}: "
        f"expected {clip(want[at:], 40)!r}, got {clip(got[at:], 40)!r}",
        {"normalize": list(steps), "first_difference": at},
    )


_FLAG_LETTERS = {
    "a": re.ASCII,
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "x": re.VERBOSE,
}


@lru_cache(maxsize=512)
def compile_pattern(pattern: str, flags: str) -> re.Pattern[str]:
    """``re.compile`` with letter flags (``a i m s x``); a bad pattern raises ``CheckError``."""
    value = 0
    for letter in flags:
        if letter not in _FLAG_LETTERS:
            raise CheckError(
                f"unknown regex flag {letter!r} in {flags!r} (use letters from 'aimsx')"
            )
        value |= _FLAG_LETTERS[letter]
    try:
        return re.compile(pattern, value)
    except re.error as exc:
        raise CheckError(f"invalid regular expression {pattern!r}: {exc}") from None


def _validate_regex(options: dict[str, Any]) -> None:
    compile_pattern(options["pattern"], options["flags"])


@builtin_check("regex", validate=_validate_regex)
def regex(subject: CheckSubject, pattern: str, flags: str = "") -> Verdict:
    """The pattern is found in the response (``re.search``); flags are letters from ``aimsx``."""
    compiled = compile_pattern(pattern, flags)
    m = compiled.search(subject.result.response)
    if m is None:
        return Verdict(False, 0.0, f"pattern {clip(pattern, 60)!r} not found in the response")
    text = m.group(0)
    details: dict[str, object] = {"match": clip(text, 200), "span": [m.start(), m.end()]}
    if compiled.groupindex:
        details["groups"] = m.groupdict()
    return Verdict(True, 1.0, f"pattern matched {clip(text, 60)!r}", details)


@batch_form("regex")
def _regex_batch(batch: SubjectBatch, pattern: str, flags: str = "") -> BatchVerdicts:
    compiled = compile_pattern(pattern, flags)
    named = bool(compiled.groupindex)
    not_found = f"pattern {clip(pattern, 60)!r} not found in the response"
    said: dict[str, str] = {}  # matched text -> explanation (matches often repeat)
    matches = [compiled.search(out) for out in batch.response]
    explanation: list[str] = []
    details: list[dict[str, Any]] = []
    for m in matches:
        if m is None:
            explanation.append(not_found)
            details.append({})
            continue
        text = m.group(0)
        why = said.get(text)
        if why is None:
            why = said[text] = f"pattern matched {clip(text, 60)!r}"
        explanation.append(why)
        found: dict[str, Any] = {"match": clip(text, 200), "span": [m.start(), m.end()]}
        if named:
            found["groups"] = m.groupdict()
        details.append(found)
    return BatchVerdicts(
        [m is not None for m in matches],
        [0.0 if m is None else 1.0 for m in matches],
        explanation,
        details,
    )


@builtin_check("keywords")
def keywords(
    subject: CheckSubject,
    values: Annotated[list[str], Field(min_length=1)],
    mode: Literal["all", "any"] = "all",
    caseSensitive: bool = False,
) -> Verdict:
    """The response contains all (or any) of the keywords; score = fraction found."""
    haystack = _fold(subject.output, caseSensitive)
    found = [v for v in values if _fold(v, caseSensitive) in haystack]
    missing = [v for v in values if v not in found]
    passed = not missing if mode == "all" else bool(found)
    explanation = f"found {len(found)} of {len(values)} keywords"
    if missing:
        explanation += f"; missing: {', '.join(repr(clip(v, 30)) for v in missing[:5])}"
    return Verdict(
        passed,
        len(found) / len(values),
        explanation,
        {"found": found, "missing": missing, "mode": mode},
    )


_FUZZ = {
    "ratio": fuzz.ratio,
    "partial_ratio": fuzz.partial_ratio,
    "token_sort_ratio": fuzz.token_sort_ratio,
    "token_set_ratio": fuzz.token_set_ratio,
}


@builtin_check("fuzzy")
def fuzzy(
    subject: CheckSubject,
    threshold: Unit = 0.8,
    scorer: Literal["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio"] = "ratio",
    caseSensitive: bool = False,
) -> Verdict:
    """rapidfuzz similarity (0..1) between response and expected output, at least ``threshold``."""
    expected = expected_text(subject)
    if expected is None:
        return Verdict(False, 0.0, NOTHING_EXPECTED)
    a = _fold(subject.output.strip(), caseSensitive)
    b = _fold(expected.strip(), caseSensitive)
    score = min(1.0, max(0.0, _FUZZ[scorer](a, b) / 100.0))
    passed = score >= threshold
    return Verdict(
        passed,
        score,
        f"{scorer} similarity {score:.3f} {'>=' if passed else '<'} threshold {threshold}",
        {"similarity": score, "threshold": threshold, "scorer": scorer},
    )
