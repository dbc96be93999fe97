"""The httpx hook: ``Client.send`` / ``AsyncClient.send`` of httpx and httpx2 ask
``interceptor.decide`` what to do with each request (the OpenAI, Anthropic and Google GenAI
clients, and every client built on httpx)."""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from tracereplay.replay.answering.llm.layer import Layer, Reply

#: the HTTP client libraries whose ``send`` the replay wraps (the fork server imports them too:
#: ``workers.http_clients``)
HTTP_CLIENTS = ("httpx", "httpx2")


def _response(module: Any, reply: Reply, request: Any) -> Any:
    response = module.Response(
        reply.status, headers=reply.headers, content=reply.content, request=request
    )
    with contextlib.suppress(Exception):
        response.elapsed = timedelta(0)
    return response


def patch(name: str, layer: Layer) -> bool:
    """Wrap ``send`` of the clients of the httpx-like package ``name`` (False: not installed)."""
    decide, sending, wants_body = layer
    try:
        module = importlib.import_module(name)
    except ImportError:
        return False
    client, aclient = module.Client, module.AsyncClient
    send, asend = client.send, aclient.send

    def patched_send(self: Any, request: Any, **kwargs: Any) -> Any:
        method, url = request.method, str(request.url)
        reply = decide(method, url, request.read() if wants_body(method, url) else b"")
        if reply is None:
            with sending():
                return send(self, request, **kwargs)
        return _response(module, reply, request)

    async def patched_asend(self: Any, request: Any, **kwargs: Any) -> Any:
        method, url = request.method, str(request.url)
        reply = decide(method, url, await request.aread() if wants_body(method, url) else b"")
        if reply is None:
            with sending():
                return await asend(self, request, **kwargs)
        return _response(module, reply, request)

    patched_send.__wrapped__ = send  # type: ignore[attr-defined]
    patched_asend.__wrapped__ = asend  # type: ignore[attr-defined]
    client.send = patched_send
    aclient.send = patched_asend
    return True


def hooks() -> dict[str, Callable[[Layer], bool]]:
    """One hook per httpx-like package (``HTTP_CLIENTS``)."""
    return {name: functools.partial(patch, name) for name in HTTP_CLIENTS}
