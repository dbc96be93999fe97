"""A store found damaged stays known as damaged: the note ``<db>.damaged`` beside the file.

DuckDB verifies a block's checksum only when it reads that block, so a command finds damage
only in the part it reads; one that reads elsewhere answers right, and a write could go on
adding to a file whose other half is gone. So the first command that meets damage (or
``tracereplay check``) leaves this note, and every later open refuses the file with the same
one line, until ``check`` finds it whole again (a copy restored) or the file is moved aside
(the note stays with the path, so a new store there starts clean). Opening also compares the
file's size with the blocks DuckDB's header counts: a file cut short is refused at once,
whatever the command reads.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from tracereplay.errors import StoreError, one_line
from tracereplay.store.paths import damage_path

#: DuckDB's file starts with three 4 KiB headers, then its blocks
_HEADERS_BYTES = 3 * 4096
RECOVERY = (
    "restore it from a copy, or move it aside and run any command to start a new store "
    "(it stores the spool); see 'A damaged store' in docs/cli.md"
)


class DamagedStoreError(StoreError):
    """The store file is damaged (cut short, overwritten): nothing more is written into it."""


def damaged(path: Path, detail: str) -> DamagedStoreError:
    """The one-line error for a damaged store, naming the recovery."""
    return DamagedStoreError(f"{path} is damaged: {detail[:200]}; {RECOVERY}")


def _identity(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def record(path: Path, detail: str) -> None:
    """Leave the note (best effort: a full disk may refuse it; the error is reported anyway).
    It names the file (device and inode): a file moved there later is not the damaged one."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        damage_path(path).write_text(
            f"{_identity(path)} {stamp} {one_line(detail)[:500]}\n", encoding="utf-8"
        )
    except OSError:
        pass


def recorded(path: Path) -> str | None:
    """What the note says, or None when the store is not known to be damaged (no note, or a
    note about a file no longer there: it was moved aside, a new store took its place)."""
    note = damage_path(path)
    try:
        text = note.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"(the note {note.name} cannot be read: {exc})"
    identity, _, rest = text.partition(" ")
    if identity != _identity(path):
        note.unlink(missing_ok=True)
        return None
    return rest.partition(" ")[2] or "(found earlier)"


def clear(path: Path) -> None:
    damage_path(path).unlink(missing_ok=True)


def refuse_if_recorded(path: Path) -> None:
    if (found := recorded(path)) is not None:
        raise damaged(path, f"{found} (found earlier; 'tracereplay check' looks again)")


def truncation(con: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """Why the file is shorter than its own header says, or None (cheap: no block is read).
    Not judged while a write-ahead log is beside the file (its blocks may not be written yet)."""
    if path.with_name(path.name + ".wal").exists():
        return None
    rows = con.execute(
        "SELECT block_size, used_blocks FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).fetchall()
    if not rows or rows[0][0] is None:
        return None
    # blocks in use must be in the file (free ones may lie past its end: DuckDB shrinks it)
    block_size, used_blocks = int(rows[0][0]), int(rows[0][1])
    expected = _HEADERS_BYTES + block_size * used_blocks
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size >= expected:
        return None
    return (
        f"the file is {size} bytes, shorter than the {used_blocks} blocks in use "
        f"({expected} bytes): it was cut short"
    )
