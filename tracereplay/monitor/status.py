"""What a person asks of a monitor: how many runs it judged, how many passed, which checks fail.

A judged run FAILED when any of its checks failed; it is ERROR when none failed but a check
could not be carried out (a judge that was down says nothing about the agent); else PASSED.
The window is the runs' start time (``--since 1h``: production runs of the last hour).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracereplay.store import monitors
from tracereplay.store.db import Store


@dataclass
class MonitorStatus:
    """The numbers of ``monitor status``; ``worst`` is a row per check, worst pass rate first."""

    monitor: str
    runs: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    worst: list[dict[str, Any]] = field(default_factory=list)
    #: judged runs a person labelled too (``tracereplay label``), the monitor's ERROR runs left
    #: out (it said nothing of them); ``agreed``: those where it PASSED a run labelled good or
    #: FAILED one labelled bad
    labelled: int = 0
    agreed: int = 0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.runs if self.runs else None


def monitor_status(store: Store, name: str, since: datetime | None = None) -> MonitorStatus:
    out = MonitorStatus(name)
    counts = monitors.status_counts(store, name, since)
    out.passed, out.failed, out.errored = (counts.get(s, 0) for s in ("PASSED", "FAILED", "ERROR"))
    out.runs = out.passed + out.failed + out.errored
    out.worst = monitors.worst_checks(store, name, since)
    out.agreed, out.labelled = monitors.label_agreement(store, name, since)
    return out
