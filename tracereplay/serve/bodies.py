"""Reading an HTTP request body and inflating it, each within its limit.

A gzip bomb is refused without being inflated: the body is inflated in 1 MiB steps
(``zlib.decompressobj(...).decompress(data, max_length)``) and reading stops as soon as the
output passes ``max_decompressed_bytes``; every step is charged to the request's in-flight
budget first.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import BinaryIO

from tracereplay.serve.rejections import InvalidData, LengthRequired, TooLarge, UnsupportedMediaType

STEP = 1024 * 1024
_ENCODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def check_encoding(content_encoding: str | None) -> str:
    """The normalized ``Content-Encoding`` (``""``, ``gzip`` or ``deflate``), else 415."""
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return ""
    if encoding in _ENCODINGS:
        return encoding
    raise UnsupportedMediaType(
        f"Content-Encoding {encoding!r} is not supported (use gzip, deflate or none)"
    )


def read_body(
    rfile: BinaryIO, content_length: str | None, transfer_encoding: str | None, max_bytes: int
) -> bytes:
    """Read a ``Content-Length`` or chunked body of at most ``max_bytes``; ``EOFError`` if cut."""
    if transfer_encoding and "chunked" in transfer_encoding.lower():
        return _read_chunked(rfile, max_bytes)
    if content_length is None:
        raise LengthRequired("a Content-Length header (or chunked transfer encoding) is required")
    length = parse_length(content_length, max_bytes)
    data = rfile.read(length) if length else b""
    if len(data) < length:
        raise EOFError("the client closed the connection before sending the whole body")
    return data


def parse_length(content_length: str, max_bytes: int) -> int:
    """The declared body length; 400 if not a number, 413 if over ``max_bytes``."""
    try:
        length = int(content_length)
    except ValueError:
        raise InvalidData(f"bad Content-Length {content_length!r:.40}") from None
    if length < 0:
        raise InvalidData("negative Content-Length")
    if length > max_bytes:
        raise TooLarge(
            f"the body is {length} bytes; the limit is {max_bytes} bytes (--max-request-mib)"
        )
    return length


def _read_chunked(rfile: BinaryIO, max_bytes: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = rfile.readline(1024)
        if not line.endswith(b"\n"):
            raise EOFError("the chunked body was cut")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise InvalidData("bad chunk size in a chunked body") from None
        if size == 0:
            while rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields
            return b"".join(parts)
        total += size
        if total > max_bytes:
            raise TooLarge(f"the body is over the limit of {max_bytes} bytes (--max-request-mib)")
        chunk = rfile.read(size)
        if len(chunk) < size or rfile.read(2) not in (b"\r\n", b"\n"):
            raise EOFError("the chunked body was cut")
        parts.append(chunk)


def inflate(data: bytes, encoding: str, max_bytes: int, reserve: Callable[[int], None]) -> bytes:
    """``data`` inflated (``encoding`` from ``check_encoding``), refusing past ``max_bytes``.

    ``reserve(n)`` is called before keeping each ``n`` more bytes (it may refuse with ``Busy``).
    Raises ``TooLarge`` (413) past the limit and ``InvalidData`` (400) for a damaged stream.
    """
    if not encoding:
        if len(data) > max_bytes:
            raise TooLarge(f"the body is over the limit of {max_bytes} bytes")
        return data
    out: list[bytes] = []
    total = 0
    pending = data
    while pending:
        inflater = zlib.decompressobj(_ENCODINGS[encoding])
        try:
            while True:
                piece = inflater.decompress(pending, STEP)
                pending = inflater.unconsumed_tail
                if piece:
                    total += len(piece)
                    if total > max_bytes:
                        raise TooLarge(
                            f"the body inflates past the limit of {max_bytes} bytes "
                            "(--max-decompressed-bytes)"
                        )
                    reserve(len(piece))
                    out.append(piece)
                if inflater.eof:
                    pending = inflater.unused_data  # gzip allows several members in a row
                    break
                if not pending and not piece:
                    raise InvalidData(f"the {encoding} body is cut short")
        except zlib.error as exc:
            raise InvalidData(f"the body is not valid {encoding} ({exc})") from None
    return b"".join(out)
