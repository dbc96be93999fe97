"""One environment variable set for a while, then put back as it was."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["env_set"]


@contextmanager
def env_set(name: str, value: str) -> Iterator[None]:
    """``$name`` = ``value`` inside the block; afterwards its old value, or unset if it had none
    (what a child process started inside inherits, without leaving it to later ones)."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
