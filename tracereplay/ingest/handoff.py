"""Prepared batches passed from a worker process to the writer as memory-mapped Arrow files.

Pickling a batch's tables through a pipe copies every byte four times (into the pickle, into the
kernel, out of it, into the result) and keeps a thread of the writer process busy reading and
unpickling. Here the worker writes each table once, as an Arrow IPC file in shared memory
(``/dev/shm`` where the system has it, else the temporary directory), and sends only the file
names; the writer maps the files and hands DuckDB the tables without copying them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from tracereplay.ingest.pipeline import PreparedBatch
from tracereplay.store.rows import RunTables

_SHM = Path("/dev/shm")


@dataclass(frozen=True)
class Shipped:
    """A ``PreparedBatch`` whose tables wait in files (``slot -> path``); small to pickle."""

    batch: PreparedBatch
    files: dict[str, str]


#: free bytes /dev/shm must have to be used (containers often give it 64 MB; a few parts in
#: flight take tens of MB): else the files go to the temporary directory (the page cache)
SHM_MIN_FREE = 512 * 1024 * 1024


def _shm_usable() -> bool:
    try:
        if not (_SHM.is_dir() and os.access(_SHM, os.W_OK)):
            return False
        stat = os.statvfs(_SHM)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize >= SHM_MIN_FREE


def new_directory() -> Path:
    """A new private directory for handoff files, in shared memory where there is enough of
    it. The caller removes it (``remove_directory``)."""
    base = _SHM if _shm_usable() else None
    return Path(tempfile.mkdtemp(prefix="tracereplay-ingest-", dir=base))


def remove_directory(path: Path) -> None:
    """Remove a handoff directory and whatever is left in it."""
    shutil.rmtree(path, ignore_errors=True)


@contextmanager
def handoff_directory() -> Iterator[Path]:
    """A private directory for the files of one ingest, removed with whatever is left in it."""
    path = new_directory()
    try:
        yield path
    finally:
        remove_directory(path)


def _write(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read(path: str) -> pa.Table:
    """The table of ``path``, mapped rather than read; the file is gone from the directory
    after this (its pages live as long as the table)."""
    table = pa.ipc.open_file(pa.memory_map(path, "r")).read_all()
    os.unlink(path)
    return table


def ship(batch: PreparedBatch, directory: Path, name: str) -> Shipped:
    """Write the tables of ``batch`` into ``directory`` (file names start with ``name``, unique
    to the batch) and return what the writer needs to get them back."""
    tables = {
        "spans": batch.spans,
        "runs": batch.runs.runs,
        "tool_calls": batch.runs.tool_calls,
        "llm_calls": batch.runs.llm_calls,
    }
    files = {}
    for slot, table in tables.items():
        if table is not None:
            path = directory / f"{name}.{slot}.arrow"
            _write(table, path)
            files[slot] = str(path)
    return Shipped(replace(batch, spans=None, runs=RunTables()), files)


def receive(shipped: Shipped) -> PreparedBatch:
    """The batch ``ship`` wrote, its tables mapped from their files (which are removed)."""
    tables = {slot: _read(path) for slot, path in shipped.files.items()}
    return replace(
        shipped.batch,
        spans=tables.get("spans"),
        runs=RunTables(tables.get("runs"), tables.get("tool_calls"), tables.get("llm_calls")),
    )
