"""What an ingest did (``IngestStats``): a module of its own, so a command that opens the store
with nothing to drain does not import the ingest pipeline (Arrow compute, the converter)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class IngestStats:
    """What one ingest did: spans and logs read and newly stored, and the runs each touched
    trace has now.

    ``run_counts`` maps every trace touched to its run count after its latest conversion, so a
    trace that arrives in pieces (one span per request, many files) counts once, with the runs
    it ends with: ``traces`` and ``runs`` are distinct counts, not sums over batches.
    """

    spans: int = 0
    new_spans: int = 0
    logs: int = 0
    new_logs: int = 0
    run_counts: dict[str, int] = field(default_factory=dict)

    @property
    def traces(self) -> int:
        """Distinct traces touched."""
        return len(self.run_counts)

    @property
    def runs(self) -> int:
        """Runs the touched traces have now."""
        return sum(self.run_counts.values())

    def add(self, other: IngestStats) -> None:
        """Fold in a later batch's stats (its run counts replace earlier ones)."""
        for f in fields(self):
            if f.name != "run_counts":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.run_counts.update(other.run_counts)
