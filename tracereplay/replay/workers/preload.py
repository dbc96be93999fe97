"""What the fork server imports for agent processes, and starting it before the eval needs it.

Agent processes are forked from the fork server (``tracereplay.forkserver``), so what it has
imported each of them starts with: the replay code with the built-in checks
(``agent_child``), the framework adapters (which import no framework; loading an agent asks
each of them) and the HTTP clients the replay wraps (about 140 modules; ``http_clients``),
imported once in the fork server so that each process need not on its first case (one that
is not installed is skipped). ``start_agent_server()`` starts it at once, so that it imports
all that while the eval imports its own code and reads the store. The first agent process
waits for the fork server's imports, so this module imports next to nothing itself: the
``tracereplay`` command calls it first (``cli.app.start_agent_server_early``).
"""

from __future__ import annotations

from tracereplay.forkserver import worker_context
from tracereplay.replay.frameworks import BUILTIN_MODULES

PRELOAD = [
    "tracereplay.replay.workers.agent_child",
    *BUILTIN_MODULES,
    "tracereplay.replay.workers.http_clients",  # httpx_hook.HTTP_CLIENTS, without httpx's CLI
]


def start_agent_server() -> None:
    """Start the fork server now (if it does not run yet) with ``PRELOAD`` among its imports."""
    worker_context(PRELOAD, start=True)
