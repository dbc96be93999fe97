"""An agent whose module takes a second to import, as a big framework's does (CrewAI's takes
about 4 s of CPU): ``answer`` is the reference weather agent. With ``$REPLAY_AGENT_PIDS`` the
process id is written there by each import and each case (which processes loaded it, which
ran cases)."""

from __future__ import annotations

import os
import time

from replay_agents import _note_pid, weather

_note_pid(os.getpid())
time.sleep(1.0)  # the import's cost, in time: what a second agent process would pay again


def answer(query: str) -> str:
    _note_pid(os.getpid())
    return weather(query)
