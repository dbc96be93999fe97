"""The urllib3 hook: ``HTTPConnectionPool.urlopen`` asks ``interceptor.decide`` what to do with
each request (boto3 through botocore, requests, and every client on urllib3). An answer is a
real ``urllib3.response.HTTPResponse`` read from bytes, preloaded or not as the caller asked,
so the client reads it (a stream too: Bedrock's ConverseStream) as it reads the network's."""

from __future__ import annotations

import http
import inspect
import io
from typing import Any

from tracereplay.replay.answering.llm.layer import Layer, Reply


def _url(pool: Any, url: str) -> str:
    """The full URL of a pool's request (``url``: its path, or a full URL through a proxy)."""
    if "://" in url:
        return url
    port = f":{pool.port}" if pool.port else ""
    return f"{pool.scheme}://{pool.host}{port}{url}"


def _content(body: Any) -> bytes:
    """A request body as bytes (the pool is then given those bytes, not a spent stream)."""
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    if hasattr(body, "read"):
        data = body.read()
        return data.encode() if isinstance(data, str) else bytes(data)
    return b"".join(p.encode() if isinstance(p, str) else bytes(p) for p in body)


def _response(module: Any, reply: Reply, method: str, url: str, options: dict[str, Any]) -> Any:
    headers = dict(reply.headers, **{"content-length": str(len(reply.content))})
    try:
        reason = http.HTTPStatus(reply.status).phrase
    except ValueError:
        reason = ""
    return module.HTTPResponse(
        body=io.BytesIO(reply.content),
        headers=headers,
        status=reply.status,
        reason=reason,
        preload_content=options.get("preload_content", True),
        decode_content=options.get("decode_content", True),
        request_method=method,
        request_url=url,
    )


def patch(layer: Layer) -> bool:
    """Wrap ``urlopen`` of urllib3's connection pools (False: urllib3 is not installed)."""
    decide, sending, wants_body = layer
    try:
        import urllib3.connectionpool
        import urllib3.response
    except ImportError:
        return False
    pool = urllib3.connectionpool.HTTPConnectionPool
    urlopen = pool.urlopen
    signature = inspect.signature(urlopen)

    def patched_urlopen(
        self: Any, method: str, url: str, body: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        full = _url(self, url)
        llm = wants_body(method, full)
        if llm:
            body = _content(body)
        reply = decide(method, full, body if llm else b"")
        if reply is None:
            with sending():
                return urlopen(self, method, url, body, *args, **kwargs)
        options = signature.bind(self, method, url, body, *args, **kwargs).arguments
        return _response(urllib3.response, reply, method, full, options)

    patched_urlopen.__wrapped__ = urlopen  # type: ignore[attr-defined]
    pool.urlopen = patched_urlopen  # type: ignore[method-assign]
    return True
