"""Which LLM API an HTTP request calls, read from its method and URL.

``endpoint(method, url)`` gives an ``Endpoint``: the API ("chat", "responses", "anthropic",
"gemini", "bedrock", "cohere"), and what the URL itself says of the call: the model (Gemini and
Bedrock name it in the path, not in the body) and whether a stream is asked (Gemini's
``:streamGenerateContent``, Bedrock's ``/converse-stream``; the other APIs ask it in the body).
Any other request is no LLM call (``None``).

``token_count(method, url)`` names the API of a token-counting request (Anthropic's
``/messages/count_tokens``, OpenAI's ``/responses/input_tokens``, Gemini's ``:countTokens``):
no model turn, so nothing recording it, but an agent may ask before each call (CrewAI's
Anthropic provider does, to budget its context).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

#: every API answered from the recording
APIS = ("chat", "responses", "anthropic", "gemini", "bedrock", "cohere")


@dataclass(frozen=True)
class Endpoint:
    """One LLM API call as its URL shows it."""

    api: str
    model: str = ""  # the model the URL names ('' when the body names it)
    stream: bool = False  # the URL asks a stream (else the body's "stream" says)
    sse: bool = False  # a Gemini stream as server-sent events (``?alt=sse``), else a JSON array


#: ``.../models/{model}:generateContent`` (the Gemini API, Vertex AI's publisher models)
_GEMINI = re.compile(r"/(?:models|tunedModels)/([^/:]+):(generateContent|streamGenerateContent)$")
#: ``/model/{modelId}/converse`` (the model id URL-encoded: an ARN holds ``/`` and ``:``)
_BEDROCK = re.compile(r"/model/([^/]+)/(converse|converse-stream)$")


#: ``.../models/{model}:countTokens``
_GEMINI_COUNT = re.compile(r"/(?:models|tunedModels)/[^/:]+:countTokens$")


def endpoint(method: str, url: str) -> Endpoint | None:
    """The LLM API a request calls (``url``: a full URL, or a path with its query), or None."""
    if method.upper() != "POST":
        return None
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        return Endpoint("chat")
    if path.endswith("/responses"):
        return Endpoint("responses")
    if path.endswith("/messages") and "/threads/" not in path:
        return Endpoint("anthropic")
    if path.endswith("/v2/chat"):
        return Endpoint("cohere")
    found = _GEMINI.search(path)
    if found:
        stream = found.group(2) == "streamGenerateContent"
        sse = parse_qs(parts.query).get("alt") == ["sse"]
        return Endpoint("gemini", unquote(found.group(1)), stream, sse)
    found = _BEDROCK.search(path)
    if found:
        return Endpoint("bedrock", unquote(found.group(1)), found.group(2) == "converse-stream")
    return None


def token_count(method: str, url: str) -> str | None:
    """The API of a token-counting request (``"anthropic"``, ``"responses"``, ``"gemini"``),
    or None."""
    if method.upper() != "POST":
        return None
    path = urlsplit(url).path.rstrip("/")
    if path.endswith("/messages/count_tokens"):
        return "anthropic"
    if path.endswith("/responses/input_tokens"):
        return "responses"
    if _GEMINI_COUNT.search(path):
        return "gemini"
    return None


def as_endpoint(api: str | Endpoint) -> Endpoint:
    """``api`` as an ``Endpoint`` (an API name alone: nothing said by the URL)."""
    return api if isinstance(api, Endpoint) else Endpoint(api)
