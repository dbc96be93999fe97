"""Getting spans into the store: files, the spool, and the conversion of touched traces.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from tracereplay.ingest.drain import drain_spool
from tracereplay.ingest.opening import open_store
from tracereplay.ingest.pipeline import IngestStats, ingest_batch

__all__ = ["IngestStats", "drain_spool", "ingest_batch", "open_store"]
