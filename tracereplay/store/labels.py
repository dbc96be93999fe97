"""Labels: what a person said about a run (``labels`` table, migration 0013).

A label is a verdict (``good`` or ``bad``), who gave it and when, an optional note and an
optional corrected answer (``expected``). A run may have several; its latest is the run's label
(the ``latest_labels`` view). ``Store.add_label``, ``Store.list_labels`` and
``Store.latest_labels`` read and write them the same way on every engine.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: what a label says of a run
VERDICTS = ("good", "bad")
#: who labels, when set (else the OS user)
USER_ENV = "TRACEREPLAY_USER"
#: the columns of ``labels``, in table order
COLUMNS = ("label_id", "run_id", "verdict", "note", "expected", "author", "created_at")


@dataclass(frozen=True)
class Label:
    """One row of ``labels``."""

    label_id: str
    run_id: str
    verdict: str
    note: str | None
    expected: str | None
    author: str | None
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Label:
        return cls(**{c: row[c] for c in COLUMNS})

    def to_dict(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in COLUMNS}


def default_author() -> str:
    """Who labels: ``$TRACEREPLAY_USER``, else the OS user (``"unknown"`` when there is none)."""
    given = os.environ.get(USER_ENV, "").strip()
    if given:
        return given
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a uid without a passwd entry (some containers)
        return "unknown"


def verdict_of(text: str) -> str:
    """A verdict from user text (``bad``, ``Good``); ``ValueError`` for anything else."""
    value = text.strip().lower()
    if value not in VERDICTS:
        raise ValueError(f"a label is good or bad, not '{text}'")
    return value
