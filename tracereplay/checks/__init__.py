"""Checks: the registry (``check``, ``run_check``, ``validate_check_specs``) and the built-ins.

The check kinds a suite may name are defined here, below both ``tracereplay.promote`` (which
validates a suite's check definitions against them) and ``tracereplay.evaluate`` (which runs
them). Built-in check modules (text, similarity, tools, run, passfail, judge, conversation)
register themselves on the first registry lookup, so importing this package stays cheap.
"""

from tracereplay.checks.custom import CheckModuleError, load_check_modules
from tracereplay.checks.registry import (
    CheckDefinitionError,
    CheckError,
    CheckKind,
    PreparedCheck,
    Verdict,
    check,
    error_score,
    get_check_kind,
    list_check_kinds,
    prepare_check,
    run_check,
    validate_check_specs,
)

__all__ = [
    "CheckDefinitionError",
    "CheckError",
    "CheckKind",
    "CheckModuleError",
    "PreparedCheck",
    "Verdict",
    "check",
    "error_score",
    "get_check_kind",
    "list_check_kinds",
    "load_check_modules",
    "prepare_check",
    "run_check",
    "validate_check_specs",
]
