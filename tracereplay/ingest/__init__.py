"""Getting spans into the store: files, the spool, and the conversion of touched traces.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public). Importing it registers the spool's drain with ``store/open.py``
(``on_open``), so every ``open_store(drain=True)`` reads what agents spooled; its other names
load on first use: a command that only opens the store does not import the pipeline and the
decoders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.ingest import on_open
from tracereplay.lazy import lazy_getattr

if TYPE_CHECKING:
    from tracereplay.ingest.drain import drain_spool
    from tracereplay.ingest.pipeline import ingest_batch
    from tracereplay.ingest.stats import IngestStats

on_open.install()

_LAZY = {
    "IngestStats": "tracereplay.ingest.stats",
    "drain_spool": "tracereplay.ingest.drain",
    "ingest_batch": "tracereplay.ingest.pipeline",
}
__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = ["IngestStats", "drain_spool", "ingest_batch"]
