"""The append-only spool beside the DuckDB file.

Any number of processes (agents using the SDK, ``tracereplay serve``) append OTLP payloads here
without ever touching the DuckDB file, so none of them waits for or breaks another. Whoever next
holds the DuckDB file drains the spool into it (``tracereplay.ingest.drain``).

Layout: ``<db>.spool/<time>-<pid>-<rand>.seg`` is a segment still being written by process
``pid``; it is renamed ``.done`` when its writer closes it. Each record is::

    b"TR" | kind: u8 | length: u32 BE | crc32(payload): u32 BE | payload

written with one ``write`` on an ``O_APPEND`` descriptor, then ``fsync``'d when durability is on,
so a reader sees either the whole record or (at the tail) an incomplete one it leaves for later.
"""

from __future__ import annotations

import os
import secrets
import struct
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"TR"
HEADER = struct.Struct(">2sBII")
HEADER_SIZE = HEADER.size

KIND_TRACES_PB = 1
KIND_LOGS_PB = 2
KIND_TRACES_JSON = 3
KIND_LOGS_JSON = 4
KINDS = (KIND_TRACES_PB, KIND_LOGS_PB, KIND_TRACES_JSON, KIND_LOGS_JSON)

OPEN_SUFFIX = ".seg"
DONE_SUFFIX = ".done"
CORRUPT_SUFFIX = ".corrupt"
REJECTED_DIR = "rejected"

DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024


def encode_record(kind: int, payload: bytes) -> bytes:
    return HEADER.pack(MAGIC, kind, len(payload), zlib.crc32(payload)) + payload


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SpoolWriter:
    """Appends records to this process's own segment; thread-safe and fork-aware.

    ``durable=True`` (the default) ``fsync``s before ``append`` returns, so a caller may
    acknowledge the data as soon as the call returns.
    """

    def __init__(
        self,
        directory: Path,
        *,
        durable: bool = True,
        max_segment_bytes: int = DEFAULT_MAX_SEGMENT_BYTES,
    ) -> None:
        self.directory = Path(directory)
        self.durable = durable
        self.max_segment_bytes = max_segment_bytes
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._path: Path | None = None
        self._size = 0
        self._pid = os.getpid()

    def _open_segment(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._pid = os.getpid()
        name = f"{time.time_ns():020d}-{self._pid}-{secrets.token_hex(4)}{OPEN_SUFFIX}"
        self._path = self.directory / name
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        self._size = 0
        if self.durable:
            _fsync_dir(self.directory)

    def append(self, kind: int, payload: bytes) -> None:
        """Append one record; durable on return when ``durable`` is set."""
        self.append_many([(kind, payload)])

    def append_many(self, records: Iterable[tuple[int, bytes]]) -> None:
        """Append several records with one write and one fsync."""
        blob = b"".join(encode_record(kind, payload) for kind, payload in records)
        if not blob:
            return
        with self._lock:
            if self._fd is not None and self._pid != os.getpid():
                # A forked child must not share its parent's segment.
                self._fd = None
            if self._fd is None:
                self._open_segment()
            assert self._fd is not None
            view = memoryview(blob)
            try:
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                if self.durable:
                    os.fsync(self._fd)
            except OSError:
                # a full disk mid-record: cut the segment back to its last whole record, so
                # what follows (once there is room) is read, not taken for damage
                try:
                    os.ftruncate(self._fd, self._size)
                except OSError:
                    pass
                raise
            self._size += len(blob)
            if self._size >= self.max_segment_bytes:
                self._close_segment()

    def sync(self) -> None:
        """``fsync`` what was appended so far (a writer that is not ``durable`` syncs here)."""
        with self._lock:
            if self._fd is not None and self._pid == os.getpid():
                os.fsync(self._fd)

    def _close_segment(self) -> None:
        if self._fd is None or self._path is None:
            return
        if not self.durable:
            os.fsync(self._fd)  # its records were not synced one by one
        os.close(self._fd)
        self._fd = None
        try:
            os.replace(self._path, self._path.with_suffix(DONE_SUFFIX))
        except FileNotFoundError:
            pass
        self._path = None

    def close(self) -> None:
        """Close the current segment, marking it finished for the drainer."""
        with self._lock:
            if self._pid == os.getpid():
                self._close_segment()
            else:
                self._fd = None


@dataclass(frozen=True)
class Segment:
    """One spool file as the drainer sees it."""

    path: Path
    key: str  # the name without suffix: stays the same when the writer renames .seg -> .done
    pid: int
    done: bool

    @property
    def writer_alive(self) -> bool:
        if self.done:
            return False
        if self.pid == os.getpid():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @property
    def finished(self) -> bool:
        """No more records will be appended to it."""
        return self.done or not self.writer_alive


def list_segments(directory: Path) -> list[Segment]:
    """Segments in write order (oldest first)."""
    if not directory.is_dir():
        return []
    segments = []
    for path in directory.iterdir():
        if path.suffix not in (OPEN_SUFFIX, DONE_SUFFIX):
            continue
        key = path.stem
        try:
            pid = int(key.split("-")[1])
        except (IndexError, ValueError):
            continue
        segments.append(Segment(path=path, key=key, pid=pid, done=path.suffix == DONE_SUFFIX))
    segments.sort(key=lambda s: s.key)
    return segments


@dataclass
class ReadResult:
    records: list[tuple[int, bytes]]
    end_offset: int
    corrupt: str | None = None  # why reading stopped before the end of a finished segment


def read_records(segment: Segment, offset: int, max_bytes: int = 32 * 1024 * 1024) -> ReadResult:
    """Read whole records from ``offset``, up to about ``max_bytes`` of payload.

    Stops before an incomplete tail record. A record that is damaged (bad magic or checksum)
    in a finished segment is reported in ``corrupt``; in a segment still being written it is
    treated as not yet complete.
    """
    records: list[tuple[int, bytes]] = []
    try:
        with open(segment.path, "rb") as f:
            f.seek(offset)
            total = 0
            while total < max_bytes:
                header = f.read(HEADER_SIZE)
                if len(header) < HEADER_SIZE:
                    break
                magic, kind, length, crc = HEADER.unpack(header)
                if magic != MAGIC or kind not in KINDS:
                    return ReadResult(records, offset, _damaged(segment, offset, "bad header"))
                payload = f.read(length)
                if len(payload) < length:
                    break
                if zlib.crc32(payload) != crc:
                    return ReadResult(records, offset, _damaged(segment, offset, "bad checksum"))
                records.append((kind, payload))
                offset += HEADER_SIZE + length
                total += length
    except FileNotFoundError:
        pass
    return ReadResult(records, offset)


def _damaged(segment: Segment, offset: int, why: str) -> str | None:
    return f"{segment.path.name}: {why} at byte {offset}" if segment.finished else None


def segment_size(segment: Segment) -> int:
    try:
        return segment.path.stat().st_size
    except FileNotFoundError:
        return 0


def retire_segment(segment: Segment, *, corrupt: bool = False) -> None:
    """Remove a fully drained finished segment (or set a damaged one aside as ``.corrupt``)."""
    try:
        if corrupt:
            os.replace(segment.path, segment.path.with_suffix(CORRUPT_SUFFIX))
        else:
            segment.path.unlink()
    except FileNotFoundError:
        pass


def set_aside(directory: Path, kind: int, payload: bytes, reason: str) -> Path | None:
    """Keep a record the drain could not store in ``<spool>/rejected/`` (same record format,
    one file per process, next to a ``.why`` text file), so the records after it are stored
    and this one is not lost. Returns the file, or ``None`` if it could not be written."""
    folder = Path(directory) / REJECTED_DIR
    path = folder / f"{os.getpid()}.rejected"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            f.write(encode_record(kind, payload))
            f.flush()
            os.fsync(f.fileno())
        with open(path.with_suffix(".why"), "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {' '.join(reason.split())[:500]}\n")
    except OSError:
        return None
    return path
