"""What the test agents did, seen by the test: agents replay in agent processes of their own,
so their module state is not the test's. Each tally is a file of JSON lines in
``$REPLAY_AGENT_STATE`` (set per test by tests/evaluate/conftest.py); appends of one short
line are atomic, so concurrent agent processes can share one."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any


def _file(name: str) -> Path:
    directory = os.environ.get("REPLAY_AGENT_STATE")
    if not directory:
        raise RuntimeError("REPLAY_AGENT_STATE is not set (tests/evaluate/conftest.py sets it)")
    Path(directory).mkdir(parents=True, exist_ok=True)
    return Path(directory) / f"{name}.jsonl"


class SharedList:
    """A list the agents append to and the test reads (``==``, ``in``, iteration)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def append(self, item: Any) -> None:
        with _file(self.name).open("a") as f:
            f.write(json.dumps(item) + "\n")

    def items(self) -> list[Any]:
        path = _file(self.name)
        if not path.exists():
            return []
        # tuples were written as JSON arrays: read them back as tuples
        return [
            tuple(v) if isinstance(v, list) else v
            for v in (json.loads(line) for line in path.read_text().splitlines())
        ]

    def clear(self) -> None:
        _file(self.name).unlink(missing_ok=True)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items())

    def __contains__(self, item: object) -> bool:
        return item in self.items()

    def __eq__(self, other: object) -> bool:
        return self.items() == list(other) if isinstance(other, (list, tuple)) else NotImplemented

    def __len__(self) -> int:
        return len(self.items())


class SharedCounter:
    """Counts per key across processes."""

    def __init__(self, name: str) -> None:
        self.calls = SharedList(name)

    def bump(self, key: str) -> int:
        """Count one more ``key``; returns its count."""
        self.calls.append(key)
        return self.counts()[key]

    def counts(self) -> Counter[str]:
        return Counter(self.calls.items())

    def values(self) -> list[int]:
        return list(self.counts().values())

    def clear(self) -> None:
        self.calls.clear()
