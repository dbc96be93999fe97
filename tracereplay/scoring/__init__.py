"""Running case attempts and scoring them, whatever produced the result (recorded mode, a
replay, the pytest plugin): ``runner`` runs attempts in parallel within ``limits``,
``verdicts`` turns check results into a case's verdict, ``outcomes`` holds what an attempt and
an eval run gave. Below ``replay`` and ``evaluate``, which both build on it (``tracereplay.evaluate`` re-exports the public names).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
