"""The progress bar ``tracereplay eval`` draws on stderr (imported only when an eval runs)."""

from __future__ import annotations

from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from tracereplay.cli.common import err_console
from tracereplay.evaluate.evaluation import ProgressHooks
from tracereplay.models import Status
from tracereplay.scoring.outcomes import CaseRun


class BarProgress(ProgressHooks):
    """A rich progress bar on stderr (drawn only on a terminal)."""

    def __init__(self, label: str) -> None:
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[bad]}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
            disable=not err_console.is_terminal,
        )
        self.label = label
        self.task: Any = None
        self.bad = 0

    def start(self, total: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task(Text(self.label).plain, total=total, bad="")

    def advance(self, run: CaseRun) -> None:
        if run.status is not Status.PASSED:
            self.bad += 1
        self.bar.update(self.task, advance=1, bad=f"{self.bad} not passed" if self.bad else "")

    def advance_many(self, count: int, not_passed: int) -> None:
        self.bad += not_passed
        self.bar.update(self.task, advance=count, bad=f"{self.bad} not passed" if self.bad else "")

    def stop(self) -> None:
        self.bar.stop()
