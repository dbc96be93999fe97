"""Eval runs whose process is gone are never left ``running``.

An eval writes its ``eval_runs`` row as ``running`` and records which process runs it
(``options.process``: pid and host). A process that died without finishing the row (killed,
crashed, the machine lost power) leaves it ``running``; the next command that opens the store
marks it ``interrupted`` (finished at the time it is noticed). Rows of a live process, or of
another host, are left alone.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import orjson

from tracereplay.store.db import Store


def process_marker() -> dict[str, Any]:
    """What an eval records about the process running it (``options.process``)."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but is not ours, or cannot tell: leave the row alone
    return True


def _dead(options: Any, host: str) -> bool:
    if isinstance(options, str):
        try:
            options = orjson.loads(options)
        except orjson.JSONDecodeError:
            return False
    process = options.get("process") if isinstance(options, dict) else None
    if not isinstance(process, dict) or process.get("host") != host:
        return False
    pid = process.get("pid")
    return isinstance(pid, int) and pid > 0 and not _alive(pid)


def mark_abandoned_eval_runs(store: Store) -> int:
    """Mark the ``running`` eval runs whose process is gone as ``interrupted``; returns how
    many. Call it inside or outside a transaction, with the store lock held."""
    rows = store.con.execute(
        "SELECT eval_run_id, options FROM eval_runs WHERE status = 'running'"
    ).fetchall()
    if not rows:
        return 0
    host = socket.gethostname()
    gone = [run_id for run_id, options in rows if _dead(options, host)]
    for run_id in gone:
        store.con.execute(
            "UPDATE eval_runs SET status = 'interrupted', finished_at = coalesce(finished_at, "
            "current_timestamp) WHERE eval_run_id = ? AND status = 'running'",
            [run_id],
        )
    return len(gone)
