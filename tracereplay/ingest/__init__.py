"""Getting spans into the store: files, the spool, and the conversion of touched traces.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public). Its names load on first use: a command that only opens the store
(``ingest.opening``) does not import the pipeline and the decoders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr

if TYPE_CHECKING:
    from tracereplay.ingest.drain import drain_spool
    from tracereplay.ingest.opening import open_store
    from tracereplay.ingest.pipeline import ingest_batch
    from tracereplay.ingest.stats import IngestStats

_LAZY = {
    "IngestStats": "tracereplay.ingest.stats",
    "drain_spool": "tracereplay.ingest.drain",
    "ingest_batch": "tracereplay.ingest.pipeline",
    "open_store": "tracereplay.ingest.opening",
}
__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = ["IngestStats", "drain_spool", "ingest_batch", "open_store"]
