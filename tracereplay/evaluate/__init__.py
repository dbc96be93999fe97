"""Scoring cases: checks, the case-level verdict, recorded mode.

Small, store-agnostic API for runners (see docs/evaluating.md):

- ``CheckSubject(case, result, run=None, ...)``: what checks look at;
- ``run_check(spec, subject) -> ScoreResult``; ``validate_check_specs(specs) -> list[str]``;
- ``score_case(case, suite_checks, subject) -> EvaluationResult``; ``error_result(...)``;
- ``score_recorded`` / ``evaluate_recorded``: recorded mode against source runs;
- ``summarize(results)``, ``merge_repeats(results)``;
- ``check`` (decorator) and ``load_check_modules(names)`` for custom checks;
- ``run_evaluation(EvalSettings(...)) -> EvalOutcome`` (with ``RunnerOptions``): a whole eval
  run, as ``tracereplay eval`` does it (imported on first use: it brings the store).
"""

from tracereplay.lazy import lazy_getattr

# every name is imported on first use: the package is imported by any of its modules (an
# agent process's preload list names one before the eval has imported anything heavy)
_CHECKS = "tracereplay.checks"
_SCORING = "tracereplay.scoring.verdicts"
_RECORDED = "tracereplay.evaluate.recorded.scoring"
_LAZY = {
    **dict.fromkeys(
        (
            "CheckDefinitionError", "CheckError", "CheckKind", "CheckModuleError", "Verdict",
            "check", "list_check_kinds", "load_check_modules", "prepare_check", "run_check",
            "validate_check_specs",
        ),
        _CHECKS,
    ),
    "CheckSubject": "tracereplay.checks.subject",
    **dict.fromkeys(("evaluate_recorded", "score_recorded", "subject_for_run"), _RECORDED),
    **dict.fromkeys(
        (
            "EvalSummary", "case_status", "error_result", "merge_repeats", "resolve_checks",
            "result_from_scores", "score_case", "summarize",
        ),
        _SCORING,
    ),
    "EvalOutcome": "tracereplay.evaluate.evaluation",
    "EvalSettings": "tracereplay.evaluate.settings",
    "run_evaluation": "tracereplay.evaluate.evaluation",
    "RunnerOptions": "tracereplay.scoring.runner",
}  # fmt: skip
__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = [
    "CheckDefinitionError",
    "CheckError",
    "CheckKind",
    "CheckModuleError",
    "CheckSubject",
    "EvalOutcome",
    "EvalSettings",
    "EvalSummary",
    "RunnerOptions",
    "Verdict",
    "case_status",
    "check",
    "error_result",
    "evaluate_recorded",
    "list_check_kinds",
    "load_check_modules",
    "merge_repeats",
    "prepare_check",
    "resolve_checks",
    "result_from_scores",
    "run_check",
    "run_evaluation",
    "score_case",
    "score_recorded",
    "subject_for_run",
    "summarize",
    "validate_check_specs",
]
