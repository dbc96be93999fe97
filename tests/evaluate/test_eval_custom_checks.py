"""Custom checks in user modules, loaded like ``--checks module``."""

from __future__ import annotations

import sys
import textwrap

import pytest
from eval_check_helpers import make_subject, run

from tracereplay.checks import registry
from tracereplay.errors import TraceReplayError
from tracereplay.evaluate import CheckModuleError, load_check_modules
from tracereplay.models import Status

MODULE = """
import tracereplay
from tracereplay import CheckSubject, Verdict


@tracereplay.check("mentionsCity")
def mentions_city(subject: CheckSubject, city: str) -> Verdict:
    found = city.lower() in subject.output.lower()
    return Verdict(found, None, f"{city} {'mentioned' if found else 'not mentioned'}")


@tracereplay.check
def short_answer(subject, max_words: int = 10):
    return len(subject.output.split()) <= max_words
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    registry.list_check_kinds()  # built-ins registered before the snapshot
    before_kinds = set(registry._REGISTRY)
    before_modules = set(sys.modules)
    yield tmp_path
    for kind in set(registry._REGISTRY) - before_kinds:
        del registry._REGISTRY[kind]
    for name in set(sys.modules) - before_modules:
        if not name.startswith("tracereplay"):
            del sys.modules[name]
    registry.clear_prepared()


def test_module_from_the_current_directory(workdir):
    (workdir / "my_checks_cwd.py").write_text(textwrap.dedent(MODULE))
    assert load_check_modules(["my_checks_cwd"]) == ["mentionsCity", "short_answer"]
    subject = make_subject("It is sunny in Paris today")
    r = run("mentionsCity", subject, city="paris")
    assert (r.status, r.explanation) == (Status.PASSED, "paris mentioned")
    assert not run("mentionsCity", subject, city="Rome").passed
    assert run("short_answer", subject).passed
    assert not run("short_answer", subject, max_words=3).passed
    assert "unknown option 'town'" in run("mentionsCity", subject, town="x").explanation


def test_package_module_and_file_path_and_comma_lists(workdir):
    pkg = workdir / "pkg_checks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "extra.py").write_text(
        "import tracereplay\n@tracereplay.check('alwaysOk')\ndef ok(subject):\n    return True\n"
    )
    (workdir / "file_checks.py").write_text(
        "import tracereplay\n@tracereplay.check('fromFile')\ndef f(subject):\n    return True\n"
    )
    added = load_check_modules(["pkg_checks.extra, ./file_checks.py"])
    assert added == ["alwaysOk", "fromFile"]
    assert load_check_modules(["pkg_checks.extra"]) == []  # importing again adds nothing


def test_missing_module_is_a_one_line_error(workdir):
    with pytest.raises(CheckModuleError, match="cannot import check module 'no_such_checks'"):
        load_check_modules(["no_such_checks"])
    with pytest.raises(CheckModuleError, match="does not exist"):
        load_check_modules(["nowhere/checks.py"])


def test_module_failing_to_import_is_an_error(workdir):
    (workdir / "broken_checks.py").write_text("import not_installed_dependency_xyz\n")
    with pytest.raises(CheckModuleError, match="broken_checks.*not_installed_dependency_xyz"):
        load_check_modules(["broken_checks"])
    (workdir / "syntax_checks.py").write_text("def (:\n")
    with pytest.raises(CheckModuleError, match="SyntaxError"):
        load_check_modules(["syntax_checks"])


def test_module_overriding_a_builtin_is_refused(workdir):
    (workdir / "override_checks.py").write_text(
        "import tracereplay\n@tracereplay.check('exact')\ndef e(subject):\n    return True\n"
    )
    with pytest.raises(TraceReplayError, match="'exact' is built in"):
        load_check_modules(["override_checks"])
