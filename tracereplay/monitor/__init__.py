"""Monitors: production runs judged as they arrive.

A monitor (``definition.py``) is a named list of checks, a selector and a sampling rate, kept in
the store (``records.py``) and as a file. ``selection.py`` finds the live runs a monitor has not
judged yet (or judged before their run was re-converted), ``judging.py`` judges one run,
``rounds.py`` does a whole round without holding the store while judges think, ``limiter.py``
paces judge calls, ``worker.py`` is the bounded queue and thread of ``serve``, ``embedded.py``
the background round the next command starts, ``status.py`` the answers (pass rate, worst
checks, failing runs).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public; docs/monitoring.md says what monitors do).
"""
