"""Recorded mode: each case scored against its source run's recorded result, no agent run.

Modules: ``scoring`` (case by case, any storage can drive it) and ``columnar`` (a whole suite
per check from one SQL join, the fast path of ``tracereplay eval``).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
