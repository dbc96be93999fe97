"""The spool: framing, torn tails, damage, rotation, many writer processes."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tracereplay.store import spool
from tracereplay.store.spool import (
    KIND_LOGS_PB,
    KIND_TRACES_PB,
    SpoolWriter,
    list_segments,
    read_records,
)


def _read_all(directory: Path) -> list[tuple[int, bytes]]:
    out = []
    for seg in list_segments(directory):
        res = read_records(seg, 0, max_bytes=1 << 40)
        out.extend(res.records)
    return out


def test_append_then_read_back_in_order(tmp_path: Path) -> None:
    w = SpoolWriter(tmp_path)
    w.append(KIND_TRACES_PB, b"one")
    w.append_many([(KIND_LOGS_PB, b"two"), (KIND_TRACES_PB, b"")])
    assert _read_all(tmp_path) == [
        (KIND_TRACES_PB, b"one"),
        (KIND_LOGS_PB, b"two"),
        (KIND_TRACES_PB, b""),
    ]
    [seg] = list_segments(tmp_path)
    assert not seg.done and seg.writer_alive and not seg.finished
    w.close()
    [seg] = list_segments(tmp_path)
    assert seg.done and seg.finished


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(spool.KINDS), st.binary(max_size=300)), max_size=20))
def test_any_records_round_trip(tmp_path_factory, records) -> None:
    directory = tmp_path_factory.mktemp("spool")
    w = SpoolWriter(directory, durable=False)
    for kind, payload in records:
        w.append(kind, payload)
    w.close()
    assert _read_all(directory) == records


def test_torn_tail_is_left_for_later(tmp_path: Path) -> None:
    w = SpoolWriter(tmp_path)
    w.append(KIND_TRACES_PB, b"complete")
    [seg] = list_segments(tmp_path)
    whole = spool.encode_record(KIND_TRACES_PB, b"second record")
    with open(seg.path, "ab") as f:
        f.write(whole[:7])  # a writer caught mid-record
    res = read_records(seg, 0)
    assert res.records == [(KIND_TRACES_PB, b"complete")]
    assert res.corrupt is None
    with open(seg.path, "ab") as f:
        f.write(whole[7:])
    res2 = read_records(seg, res.end_offset)
    assert res2.records == [(KIND_TRACES_PB, b"second record")]


def test_damage_in_a_finished_segment_is_reported(tmp_path: Path) -> None:
    w = SpoolWriter(tmp_path)
    w.append(KIND_TRACES_PB, b"good")
    w.append(KIND_TRACES_PB, b"will be damaged")
    w.close()
    [seg] = list_segments(tmp_path)
    data = bytearray(seg.path.read_bytes())
    data[-3] ^= 0xFF
    seg.path.write_bytes(bytes(data))
    res = read_records(seg, 0)
    assert res.records == [(KIND_TRACES_PB, b"good")]
    assert res.corrupt and "checksum" in res.corrupt
    spool.retire_segment(seg, corrupt=True)
    assert list_segments(tmp_path) == []
    assert list(tmp_path.glob("*.corrupt"))


def test_rotation_closes_full_segments(tmp_path: Path) -> None:
    w = SpoolWriter(tmp_path, max_segment_bytes=100)
    for i in range(5):
        w.append(KIND_TRACES_PB, bytes([i]) * 60)
    segs = list_segments(tmp_path)  # 71-byte records: a segment closes at its second one
    assert [s.done for s in segs] == [True, True, False]
    assert [p for _, p in _read_all(tmp_path)] == [bytes([i]) * 60 for i in range(5)]


def test_segment_of_a_dead_writer_counts_as_finished(tmp_path: Path) -> None:
    proc = mp.get_context("spawn").Process(target=_write_n, args=(str(tmp_path), 3, b"x"))
    proc.start()
    proc.join()
    [seg] = list_segments(tmp_path)
    assert not seg.done  # it never closed its segment
    assert seg.finished  # but its process is gone


def _write_n(directory: str, n: int, tag: bytes) -> None:
    w = SpoolWriter(Path(directory))
    for i in range(n):
        w.append(KIND_TRACES_PB, tag + b":" + str(i).encode())
    os._exit(0)  # die without closing, like a killed agent


def test_many_processes_append_at_once_and_nothing_is_lost(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_write_n, args=(str(tmp_path), 200, f"p{i}".encode())) for i in range(4)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    payloads = {p for _, p in _read_all(tmp_path)}
    assert payloads == {f"p{i}:{j}".encode() for i in range(4) for j in range(200)}
