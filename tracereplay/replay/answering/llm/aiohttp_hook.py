"""The aiohttp hook: ``ClientSession._request`` asks ``interceptor.decide`` what to do with
each request (litellm's and Google GenAI's aiohttp transports, and every client on aiohttp).
An answer is a real ``aiohttp.ClientResponse`` whose content is a ``StreamReader`` fed with
the answer's bytes: the client reads it, or iterates it as a stream, as it reads the
network's."""

from __future__ import annotations

import asyncio
import http
import inspect
import json as json_module
from typing import Any

from tracereplay.replay.answering.llm.layer import Layer, Reply


class _Fed:
    """The protocol of a ``StreamReader`` fed at once: nothing to pause or resume."""

    _reading_paused = False

    def pause_reading(self, *args: Any, **kwargs: Any) -> None:
        pass

    def resume_reading(self, *args: Any, **kwargs: Any) -> None:
        pass


class _Sent:
    """The stream writer of a request that was never written (nothing sent)."""

    output_size = 0


def _url(session: Any, url: Any, params: Any) -> Any:
    from yarl import URL

    build = getattr(session, "_build_url", None)
    full = build(url) if build is not None else URL(url)
    if params:
        try:
            full = full.extend_query(params)
        except (AttributeError, TypeError, ValueError):
            pass
    return full


def _content(session: Any, data: Any, json: Any) -> bytes:
    if json is not None:
        serialize = getattr(session, "_json_serialize", None)
        text = serialize(json) if serialize is not None else json_module.dumps(json)
        return text.encode() if isinstance(text, str) else bytes(text)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        return data.encode()
    return b""  # a form or a stream: no LLM API body


def _response(aiohttp: Any, session: Any, method: str, url: Any, reply: Reply) -> Any:
    from multidict import CIMultiDict, CIMultiDictProxy

    loop = asyncio.get_running_loop()
    request_info = aiohttp.RequestInfo(url, method, CIMultiDictProxy(CIMultiDict()), url)
    offered = {
        "writer": None,
        "continue100": None,
        "timer": aiohttp.helpers.TimerNoop(),
        "request_info": request_info,
        "traces": [],
        "loop": loop,
        "session": session,
        "stream_writer": _Sent(),
    }
    accepted = inspect.signature(aiohttp.ClientResponse).parameters
    response = aiohttp.ClientResponse(
        method, url, **{k: v for k, v in offered.items() if k in accepted}
    )
    headers = CIMultiDict(reply.headers)
    headers["content-length"] = str(len(reply.content))
    response.status = reply.status
    try:
        response.reason = http.HTTPStatus(reply.status).phrase
    except ValueError:
        response.reason = ""
    response.version = aiohttp.HttpVersion11
    response._headers = CIMultiDictProxy(headers)
    response._raw_headers = tuple((k.encode(), v.encode()) for k, v in headers.items())
    content = aiohttp.StreamReader(_Fed(), max(2**16, len(reply.content)), loop=loop)
    content.feed_data(reply.content)
    content.feed_eof()
    response.content = content
    return response


def patch(layer: Layer) -> bool:
    """Wrap ``_request`` of aiohttp's sessions (False: aiohttp is not installed)."""
    decide, sending, wants_body = layer
    try:
        import aiohttp
        import aiohttp.helpers
    except ImportError:
        return False
    session_class = aiohttp.ClientSession
    request = session_class._request

    async def patched_request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        url = _url(self, str_or_url, kwargs.get("params"))
        llm = wants_body(method, str(url))
        content = _content(self, kwargs.get("data"), kwargs.get("json")) if llm else b""
        reply = decide(method, str(url), content)
        if reply is None:
            with sending():
                return await request(self, method, str_or_url, **kwargs)
        response = _response(aiohttp, self, method, url, reply)
        if kwargs.get("raise_for_status", getattr(self, "_raise_for_status", False)) is True:
            response.raise_for_status()
        return response

    patched_request.__wrapped__ = request  # type: ignore[attr-defined]
    session_class._request = patched_request  # type: ignore[method-assign]
    return True
