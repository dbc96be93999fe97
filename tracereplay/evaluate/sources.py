"""Which service the source runs of an eval came from (the name their replays carry); the
source runs themselves are loaded by ``store/runs.py`` (``load_runs``, ``load_sub_runs``...)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tracereplay.models import Run


def source_service(runs: Iterable[Run]) -> str | None:
    """The service most of ``runs`` came from (the name their replays carry), else None; the
    SDK's default ``unknown_service...`` names none."""
    names = Counter(
        r.service_name
        for r in runs
        if r.service_name and not r.service_name.startswith("unknown_service")
    )
    return min(names, key=lambda n: (-names[n], n)) if names else None
