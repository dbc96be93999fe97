"""One module per page; each has ``routes``, a list of Starlette routes."""
