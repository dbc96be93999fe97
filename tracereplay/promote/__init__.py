"""Promotion: recorded runs become ``EvalCase``s of ``EvalSuite``s, and suites travel as files.

Modules: ``promote`` (runs -> cases), ``suites`` (create/remove/add by hand), ``suite_file`` +
``suite_import`` (YAML/JSON files), ``documents`` (context document blocks), ``checks`` (default
checks, validation against ``tracereplay.checks``), ``where`` (``--where`` run selection).
The ``eval_suites``/``eval_cases`` tables are read and written by ``tracereplay.store.suites``
and ``{{name}}`` placeholders are ``tracereplay.models.parameters``: evaluation uses both too.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from tracereplay.models.parameters import (
    fill_parameters,
    missing_parameters,
    missing_parameters_reason,
    required_parameters,
    suite_required_parameters,
)
from tracereplay.promote.checks import (
    DEFAULT_CHECK_KINDS,
    InvalidChecksError,
    check_problems,
    default_checks,
    validate_checks,
)
from tracereplay.promote.documents import (
    DocumentFormatError,
    documents_to_text,
    format_documents,
    parse_documents,
    text_to_documents,
)
from tracereplay.promote.promote import (
    BulkPromoteResult,
    PromoteError,
    PromoteOptions,
    PromoteResult,
    case_from_run,
    infer_kind,
    parse_kind,
    promote_run,
    promote_where,
)
from tracereplay.promote.session import promote_session
from tracereplay.promote.suite_file import SuiteFileError, dump_suite, load_suite
from tracereplay.promote.suite_import import ImportPlan, import_suite
from tracereplay.promote.suites import add_case, create_suite, remove_cases, remove_suite
from tracereplay.store.suites import get_case, get_suite, list_cases, list_suites

__all__ = [
    "DEFAULT_CHECK_KINDS",
    "BulkPromoteResult",
    "DocumentFormatError",
    "ImportPlan",
    "InvalidChecksError",
    "PromoteError",
    "PromoteOptions",
    "PromoteResult",
    "SuiteFileError",
    "add_case",
    "case_from_run",
    "check_problems",
    "create_suite",
    "default_checks",
    "documents_to_text",
    "dump_suite",
    "fill_parameters",
    "format_documents",
    "get_case",
    "get_suite",
    "import_suite",
    "infer_kind",
    "list_cases",
    "list_suites",
    "load_suite",
    "missing_parameters",
    "missing_parameters_reason",
    "parse_documents",
    "parse_kind",
    "promote_run",
    "promote_session",
    "promote_where",
    "remove_cases",
    "remove_suite",
    "required_parameters",
    "suite_required_parameters",
    "text_to_documents",
    "validate_checks",
]
