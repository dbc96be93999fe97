"""Pause the cyclic garbage collector around batch work (decoding, converting, scoring).

Decoding allocates many small containers (dicts, lists, spans) that hold no reference cycles;
with the collector running, each batch triggers collections that scan every live object again
and again (figures: ``benchmarks/RESULTS.md``, "gcpause").

The pause is taken once, by the entry point that owns the batch work, never by the library
functions it calls (decoders, ``prepare_batch``, ``store_prepared``): ``ingest_files``,
``drain_spool``, ``ingest_batch``, every ingest worker job (``ingest.workers``), the receiver's
JSON validation (``serve.intake``), ``suite import`` (reading, validating and storing the file),
and an eval run (``run_evaluation``, and
``eval`` from the run to its report: never while the agent's code runs in this process). A
caller of a decoder in a loop of its own (a benchmark) pauses around its loop.

A pause ends where what the batch made is freed or frozen (``gc.freeze``, which also resets the
collector's count): the count of allocations goes on while it is disabled, so the first
allocation after ``gc.enable()`` would otherwise collect every object still alive.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for the block (no-op if it is already disabled).

    Safe with threads: whoever disabled it re-enables it, so it ends enabled if it was.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
