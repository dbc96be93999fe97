"""``{{name}}`` parameter placeholders: which a text needs, which a case lacks, filling them in.

A placeholder is ``{{`` + a name + ``}}``, spaces inside the braces allowed (``{{ customer }}``);
a name starts with a letter or ``_`` and goes on with letters, digits, ``_``, ``-`` or ``.``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from tracereplay.models import EvalCase, EvalSuite

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def required_parameters(text: str) -> list[str]:
    """The distinct placeholder names in ``text``, in order of first appearance."""
    return list(dict.fromkeys(m.group(1) for m in PLACEHOLDER.finditer(text or "")))


def missing_parameters(case: EvalCase, required: Iterable[str]) -> list[str]:
    """The names in ``required`` that ``case.parameters`` gives no value for (in ``required``
    order). An empty string is a value; a case with ``parameters=None`` lacks every one."""
    given = case.parameters or {}
    return [name for name in dict.fromkeys(required) if name not in given]


def suite_required_parameters(suite: EvalSuite, *texts: str) -> list[str]:
    """What a suite's cases must give: the suite's declared ``required_parameters`` plus the
    placeholders of any agent texts (e.g. its instructions) passed in."""
    names = list(suite.required_parameters)
    for text in texts:
        names.extend(required_parameters(text))
    return list(dict.fromkeys(names))


def missing_parameters_reason(missing: Iterable[str]) -> str:
    """The one-line ERROR reason for a case that lacks parameter values ("" when none lack)."""
    names = list(missing)
    if not names:
        return ""
    listed = ", ".join(f"{{{{{n}}}}}" for n in names)
    noun = "parameter" if len(names) == 1 else "parameters"
    return f"missing required {noun} {listed}: the case gives no value, so nothing was run"


def fill_parameters(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every placeholder that ``values`` names replaced; others are left as is."""
    return PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text
    )
