"""One eval run made by several processes: CI shards (``--shard I/N``), ``--eval-run ID``, the
pytest plugin's xdist workers.

Each process evaluates its share of the cases and writes its results under the same
``eval_run_id`` (``evaluation.open_eval_run`` adds the row once, whoever comes first; the store
lock serialises them); the eval run's counts are summed from every stored result when a process
finishes, so the last one to finish leaves the whole run's figures. Shares are by position in
``seq`` order (case ``k`` goes to shard ``k % N + 1``): every job computes the same split from
the same suite, with no coordination.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import TypeVar

from tracereplay.errors import BadParameterError

T = TypeVar("T")

#: what an --eval-run id may be: a file-name-like token (it is typed in CI scripts and URLs)
_EVAL_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: the namespace of eval run ids derived from a suite and a label (``--shard`` with ``--label``)
_LABEL_NAMESPACE = uuid.UUID("6f0a3c1e-8d2b-4c55-9a4e-3b7d2f1c9e10")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N <= 10000``; one-line error otherwise."""
    match = re.fullmatch(r"\s*(\d{1,5})\s*/\s*(\d{1,5})\s*", text)
    if match is None:
        raise BadParameterError(f"--shard '{text}' is not I/N (e.g. 2/4)")
    index, count = int(match[1]), int(match[2])
    if not 1 <= index <= count <= 10000:
        raise BadParameterError(f"--shard '{text}': I must be between 1 and N (at most 10000)")
    return index, count


def shard_cases(cases: Sequence[T], index: int, count: int) -> list[T]:
    """The ``index``-th of ``count`` shares of ``cases`` (already in ``seq`` order)."""
    return [c for k, c in enumerate(cases) if k % count == index - 1]


def shared_eval_run_id(
    eval_run: str | None, shard: tuple[int, int] | None, label: str | None, suite: str
) -> str | None:
    """The eval run id the processes share: ``--eval-run`` as given; with ``--shard`` and only a
    ``--label``, an id derived from suite and label (the same in every job); ``None`` (a new
    id) otherwise. A shard with neither would make N eval runs: refused."""
    if eval_run is not None:
        if not _EVAL_RUN_ID.fullmatch(eval_run):
            raise BadParameterError(
                f"--eval-run '{eval_run}': use up to 128 letters, digits, '.', '_' or '-'"
            )
        return eval_run
    if shard is not None:
        if not label:
            raise BadParameterError(
                "--shard needs --eval-run ID (or --label) shared by every shard,"
                " so that their results make one eval run"
            )
        return str(uuid.uuid5(_LABEL_NAMESPACE, f"{suite}\0{label}"))
    return None
