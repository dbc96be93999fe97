"""The command-line interface.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
