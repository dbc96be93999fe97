"""What the HTTP hooks are given by the interceptor: ``decide`` for each request, ``sending``
around a request sent on, ``wants_body`` (whether ``decide`` needs the body), and the ``Reply``
that answers a request in place of the network.

The hooks take these as a ``Layer`` rather than importing the interceptor, which installs the
hooks: neither module imports the other."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class Reply:
    """The answer a hook gives in place of sending a request."""

    status: int
    content: bytes
    headers: dict[str, str]


class Layer(NamedTuple):
    """The interceptor's side of every hook."""

    decide: Callable[[str, str, bytes], Reply | None]
    sending: Callable[[], contextlib.AbstractContextManager[None]]
    wants_body: Callable[[str, str], bool]
