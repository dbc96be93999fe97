"""An eval's results written out: every output format in one place, for the CLI, the pytest
plugin and ``runs`` alike.

- ``json.py``: the ``--json`` document (``outcome_json``, ``write_json``);
- ``junit.py``: JUnit XML for CI (``write_junit``);
- ``foreign.py``: other tools' shapes (``eval --format``: AgenticAssure, testing-api);
- ``notes.py``: the lines that say what a case's replay saw (drift, unused recordings, the
  fork), under the results table, in a failed pytest item and in ``show``.

Each reads an ``EvalOutcome`` or its reports and imports nothing of the evaluation itself.
"""
