"""Exceptions that carry a one-line message meant for the user (the CLI prints it, exit 2)."""

from __future__ import annotations

import re


class TraceReplayError(Exception):
    """Base class: ``str(err)`` is a complete one-line message for the user."""

    exit_code = 2


class StoreBusyError(TraceReplayError):
    """The DuckDB file stayed locked by another process for longer than the timeout."""


class StoreError(TraceReplayError):
    """The DuckDB file cannot be opened or is not a tracereplay store."""


class DecodeError(TraceReplayError):
    """An OTLP payload or file cannot be decoded."""


class IngestError(TraceReplayError):
    """Ingest stopped before the end (a worker process failed); its open transaction is rolled
    back, what it had committed stays."""


class NotFoundError(TraceReplayError):
    """An id (run, case, suite, eval run) matches nothing."""


class AmbiguousIdError(TraceReplayError):
    """An id prefix matches more than one record."""


class BadParameterError(TraceReplayError):
    """A command-line value is malformed."""


_TRACEBACK = "Traceback (most recent call last)"


_URL_PASSWORD = re.compile(r"(://[^:/@\s]*):[^@\s]*@")


def hide_passwords(text: str) -> str:
    """``text`` with every URL's password shown as ``***`` (``postgresql://me:***@db/x``): a
    store URL appears in messages and logs, its password must not."""
    return _URL_PASSWORD.sub(r"\1:***@", text)


def one_line(value: BaseException | str) -> str:
    """An exception's message (or a text) on one line, for a ``TraceReplayError`` or a report.

    A traceback embedded after the message is dropped, so are caret-only lines (the ``^`` a
    database puts under the faulty spot of a statement); the rest is joined with single spaces.
    """
    text = str(value)
    cut = text.find(_TRACEBACK)
    if cut > 0:
        text = text[:cut]
    if "^" in text:
        text = "\n".join(ln for ln in text.splitlines() if set(ln.strip()) != {"^"})
    return " ".join(text.split())
