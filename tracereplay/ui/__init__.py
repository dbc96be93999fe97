"""``tracereplay ui``: a local web application over the store (Starlette + uvicorn, server-rendered
Jinja2 pages, static assets and inline SVG charts shipped in the package).

Modules: ``config`` (what the server was started with, the loopback/token rule), ``app``
(the Starlette application: routes, error pages, rendering), ``access`` (the store opened per
request, never held between requests), ``security`` (token, Host and Origin checks), ``charts``
(inline SVG), ``edits`` (promotion and case edits through ``tracereplay.promote``),
``queries/`` (the SQL each page runs) and ``routes/`` (one module per page).

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""
