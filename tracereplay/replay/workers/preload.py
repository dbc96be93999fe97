"""What the fork server imports for agent processes, and starting it before the eval needs it.

Agent processes are forked from the fork server (``tracereplay.forkserver``), so what it has
imported each of them starts with: the replay code with the built-in checks
(``agent_child``), the framework adapters (which import no framework; loading an agent asks
each of them), the HTTP clients the replay wraps (about 140 modules; ``http_clients``) and
OpenTelemetry's logs SDK, imported once in the fork server so that each process need not on
its first case (one that is not installed is skipped), and the installed libraries the agent's code imports, its
framework first of all (``library_preload``). ``start_agent_server()`` starts it at once, so
that it imports all that while the eval imports its own code and reads the store. The first
agent process waits for the fork server's imports, so this module imports next to nothing
itself: the ``tracereplay`` command calls it first (``cli.app.start_agent_server_early``).
"""

from __future__ import annotations

import os

from tracereplay.environ import env_set
from tracereplay.forkserver import server_running, worker_context
from tracereplay.replay.frameworks import BUILTIN_MODULES

PRELOAD = [
    "tracereplay.replay.workers.agent_child",
    *BUILTIN_MODULES,
    "tracereplay.replay.workers.http_clients",  # httpx_hook.HTTP_CLIENTS, without httpx's CLI
    # what an agent process's ``configure()`` imports for its log records (``sdk.config``);
    # its import runs OpenTelemetry's resource detectors on a thread pool that is done by the
    # import's end: here, before ``library_preload`` refuses threads, so a library importing
    # it (CrewAI) does not start that pool and is preloaded too
    "opentelemetry.sdk._logs",
    "opentelemetry.sdk._logs.export",
    "tracereplay.replay.workers.library_preload",  # last: the agent's libraries, if any
]


def start_agent_server(agent: str | None = None) -> None:
    """Start the fork server now (if it does not run yet) with ``PRELOAD`` among its imports,
    and the installed libraries the code of ``--agent`` ``agent`` imports (``agent_libraries``;
    ``library_preload`` keeps those whose import leaves the fork server safe to fork)."""
    from tracereplay.replay.workers.agent_libraries import agent_libraries

    # once it runs (started early by ``cli.app``), its preload is fixed: not read again
    names = agent_libraries(agent) if agent and not server_running() else []
    # the fork server inherits the environment as it starts; the agent processes get the eval's
    with env_set("TRACEREPLAY_PRELOAD_LIBRARIES", os.pathsep.join(names)):
        worker_context(PRELOAD, start=True)
