"""Input files: find them (``iter_input_files``) and decode any supported format (``read_file``).

The format is detected from the content, never the extension:

- gzip (``1f 8b``) of any format below;
- one OTLP/JSON request object (``resourceSpans`` and/or ``resourceLogs``), pretty-printed or not;
- JSON lines, as written by the Collector file exporter ``format: json``: one request per line,
  traces and logs lines mixed;
- a binary ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``;
- the Collector file exporter ``format: proto``: messages each behind a 4-byte big-endian length
  (a message may itself be compressed).
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from google.protobuf.message import DecodeError as PbDecodeError
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracereplay.errors import DecodeError
from tracereplay.otlp import pb_text
from tracereplay.otlp import text as json_text
from tracereplay.otlp.json_decode import logs_from_dict, traces_from_dict
from tracereplay.otlp.model import Decoded
from tracereplay.otlp.pb_decode import logs_from_request, traces_from_request

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_UTF8_BOM = b"\xef\xbb\xbf"
_JSON_WS = b" \t\r\n"
_OTHER_SIGNALS = ("resourceMetrics", "resource_metrics", "resourceProfiles", "resource_profiles")
_SIGNAL_NAMES = dict(zip(_OTHER_SIGNALS, ("metrics", "metrics", "profiles", "profiles")))
_NOT_OTLP = "not an OTLP file (neither OTLP/JSON nor a binary OTLP traces or logs request)"


def iter_input_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named by ``paths``: files as given, directories walked recursively (sorted),
    skipping hidden files and directories; DecodeError for a path that does not exist."""
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found.extend(Path(root, f) for f in files if not f.startswith("."))
            candidates = sorted(p for p in found if p.is_file())
        elif path.exists():
            candidates = [path]
        else:
            raise DecodeError(f"{path}: no such file or directory")
        for p in candidates:
            if p not in seen:
                seen.add(p)
                out.append(p)
    return out


def read_file(path: Path) -> Decoded:
    """Decode one input file of any supported format (see the module doc).

    Raises DecodeError("<path>: <what is wrong>") for an unreadable or undecodable file.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise DecodeError(f"{path}: cannot read ({err.strerror or err})") from None
    try:
        return decode_file_content(data)
    except DecodeError as err:
        raise DecodeError(f"{path}: {err}") from None


def frame_ranges(path: Path, part_bytes: int) -> list[tuple[int, int]] | None:
    """Cut an uncompressed Collector ``format: proto`` file into parts of whole messages.

    Returns ``(start, end)`` byte ranges of about ``part_bytes`` each, every one decodable on
    its own with ``decode_file_content`` (decoding them in order gives what ``read_file`` gives),
    or ``None`` when the file is not such a file or fits in one part: read it whole then. Only
    the 4-byte length prefixes are read.
    """
    try:
        size = os.path.getsize(path)
        if size <= part_bytes:
            return None
        with open(path, "rb") as f:
            head = f.read(64)
            if head.startswith((GZIP_MAGIC, ZSTD_MAGIC, _UTF8_BOM)) or head.lstrip(_JSON_WS)[
                :1
            ] in (b"{", b"["):
                return None  # read_file tries these forms first
            ranges: list[tuple[int, int]] = []
            start = pos = 0
            while pos < size:
                f.seek(pos)
                prefix = f.read(4)
                if len(prefix) < 4:
                    return None
                pos += 4 + int.from_bytes(prefix, "big")
                if pos > size:
                    return None
                if pos - start >= part_bytes:
                    ranges.append((start, pos))
                    start = pos
    except OSError:
        return None  # read_file reports it
    if start < size:
        ranges.append((start, size))
    return ranges if len(ranges) > 1 else None


def read_range(path: Path, start: int, end: int) -> bytes:
    """Bytes ``start:end`` of ``path`` (a ``frame_ranges`` part)."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(end - start)
    except OSError as err:
        raise DecodeError(f"{path}: cannot read ({err.strerror or err})") from None


def decode_file_content(data: bytes) -> Decoded:
    """Decode the content of an input file of any supported format (empty = nothing)."""
    return _decode_content(data, depth=0)


def _decode_content(data: bytes, depth: int) -> Decoded:
    if not data:
        return Decoded()
    if data.startswith(GZIP_MAGIC) and depth < 2:
        return _decode_content(_gunzip(data), depth + 1)
    if data.startswith(ZSTD_MAGIC) and depth < 2:
        return _decode_content(_unzstd(data), depth + 1)
    text = data[3:] if data.startswith(_UTF8_BOM) else data
    stripped = text.lstrip(_JSON_WS)
    if not stripped:
        return Decoded()
    if stripped[:1] in (b"{", b"["):
        try:
            return _decode_json_content(text)
        except DecodeError:
            # a binary request can start with 0x0a (a newline) then 0x7b ("{")
            binary = _try_binary(data, depth)
            if binary is not None:
                return binary
            raise
    binary = _try_binary(data, depth)
    if binary is None:
        raise DecodeError(_NOT_OTLP)
    return binary


def _gunzip(data: bytes) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as err:
        raise DecodeError(f"invalid gzip data ({err})") from None


def _unzstd(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14
    except ImportError:
        raise DecodeError(
            "zstd-compressed data is not supported by this Python; decompress it first (zstd -d)"
        ) from None
    try:
        return zstd.decompress(data)  # type: ignore[no-any-return]
    except zstd.ZstdError as err:
        raise DecodeError(f"invalid zstd data ({err})") from None


# ----------------------------------------------------------------------------------- JSON


def decode_request_object(obj: Any) -> Decoded:
    """Decode one parsed OTLP/JSON request object holding traces, logs, or both."""
    if not isinstance(obj, dict):
        raise DecodeError(f"not an OTLP file (a JSON {type(obj).__name__}, not a request object)")
    out = Decoded()
    has_spans = "resourceSpans" in obj or "resource_spans" in obj
    has_logs = "resourceLogs" in obj or "resource_logs" in obj
    if has_spans:
        traces_from_dict(obj, out)
    if has_logs:
        logs_from_dict(obj, out)
    for key in _OTHER_SIGNALS:
        name = _SIGNAL_NAMES[key]
        if obj.get(key) and name not in out.other_signals:
            out.other_signals.append(name)
    if not (has_spans or has_logs or not obj or any(k in obj for k in _OTHER_SIGNALS)):
        raise DecodeError("not an OTLP file (a JSON object without resourceSpans or resourceLogs)")
    return out


def _decode_json_content(text: bytes) -> Decoded:
    try:
        obj = json_text.loads(text)
    except orjson.JSONDecodeError as whole_err:
        lines = text.split(b"\n")
        first = next((line for line in lines if line.strip()), b"")
        try:
            json_text.loads(first)
        except orjson.JSONDecodeError:
            raise DecodeError(f"invalid JSON ({whole_err})") from None
        return _decode_json_lines(lines)
    return decode_request_object(obj)


def _decode_json_lines(lines: list[bytes]) -> Decoded:
    out = Decoded()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.extend(decode_request_object(json_text.loads(line)))
        except orjson.JSONDecodeError as err:
            raise DecodeError(f"line {number}: invalid JSON ({err})") from None
        except DecodeError as err:
            raise DecodeError(f"line {number}: {err}") from None
    return out


# --------------------------------------------------------------------------------- binary


def _try_binary(data: bytes, depth: int) -> Decoded | None:
    """A binary request, or the Collector's length-delimited messages; None if neither."""
    frames = _split_frames(data)
    if frames is not None:
        out = Decoded()
        offset = 0
        for index, frame in enumerate(frames, start=1):
            try:
                out.extend(_decode_content(frame, depth + 1) if frame else Decoded())
            except DecodeError as err:
                raise DecodeError(f"message {index} (at byte {offset}): {err}") from None
            offset += 4 + len(frame)
        return out
    return _decode_binary_request(data)


def _split_frames(data: bytes) -> list[bytes] | None:
    """``data`` cut into 4-byte big-endian length-prefixed messages, or None if it is not that."""
    frames: list[bytes] = []
    pos, size = 0, len(data)
    while pos < size:
        if pos + 4 > size:
            return None
        length = int.from_bytes(data[pos : pos + 4], "big")
        pos += 4
        if pos + length > size:
            return None
        frames.append(data[pos : pos + length])
        pos += length
    return frames or None


def _parse(cls: type[Message], data: bytes) -> Any:
    try:
        return pb_text.parse(cls, data)
    except PbDecodeError:
        return None


def _clean(msg: Message) -> bool:
    return len(UnknownFieldSet(msg)) == 0


def _spans(req: ExportTraceServiceRequest) -> Iterator[Any]:
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            yield from ss.spans


def _first_log(req: ExportLogsServiceRequest) -> Any:
    for rl in req.resource_logs:
        for sl in rl.scope_logs:
            for record in sl.log_records:
                return record
    return None


def _decode_binary_request(data: bytes) -> Decoded | None:
    """Traces if a span has 16/8-byte ids (a log record read as a span never has: the fields
    differ in wire type), else logs if the first log record parses cleanly; both requests share
    one wire layout down to the span/log record."""
    traces = _parse(ExportTraceServiceRequest, data)
    if traces is not None and not _clean(traces):
        traces = None
    first_span = None
    if traces is not None:
        for span in _spans(traces):
            first_span = first_span or span
            if len(span.trace_id) == 16 and len(span.span_id) == 8:
                out = Decoded()
                traces_from_request(traces, out)
                return out
    logs = _parse(ExportLogsServiceRequest, data)
    if logs is not None and not _clean(logs):
        logs = None
    record = _first_log(logs) if logs is not None else None
    if record is not None and _clean(record):
        out = Decoded()
        logs_from_request(logs, out)
        return out
    if first_span is not None and _clean(first_span):  # spans, all with bad ids: rejected
        out = Decoded()
        traces_from_request(traces, out)
        return out
    if traces is not None and first_span is None and record is None:
        return Decoded()  # a valid but empty request
    return None
