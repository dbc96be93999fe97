"""Input files: format detection by content, Collector file-exporter formats, bad files, walking."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from otlp_helpers import (
    FIXTURES,
    JSONL_FIXTURE,
    LOGS_FIXTURE,
    NOT_OTLP_JSON,
    from_otlp_json,
    length_delimited,
)

from tracereplay.errors import DecodeError
from tracereplay.otlp import Decoded, decode_traces_pb, iter_input_files, read_file

GENAI = "generated-otel-genai-latest__agent_tool_calls"
OPENINF = "generated-openinference__agent_tool_calls"


def _pb(base: str) -> bytes:
    return (FIXTURES / f"{base}.pb").read_bytes()


def _logs_pb() -> bytes:
    obj = orjson.loads((FIXTURES / LOGS_FIXTURE).read_bytes())
    return from_otlp_json(obj, ExportLogsServiceRequest).SerializeToString()


def _write(tmp_path: Path, data: bytes, name: str = "input") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_collector_proto_format_length_delimited(tmp_path: Path) -> None:
    data = length_delimited(_pb(GENAI), _pb(OPENINF), _logs_pb())
    d = read_file(_write(tmp_path, data))
    expected = decode_traces_pb(_pb(GENAI)).spans + decode_traces_pb(_pb(OPENINF)).spans
    assert d.spans == expected
    assert len(d.logs) == 9
    # gzip of the whole file, and a single framed message, work too
    assert read_file(_write(tmp_path, gzip.compress(data), "gz")) == d
    assert len(read_file(_write(tmp_path, length_delimited(_pb(GENAI)), "one")).spans) == 5


def test_collector_proto_format_with_gzipped_messages(tmp_path: Path) -> None:
    data = length_delimited(gzip.compress(_pb(GENAI)), gzip.compress(_pb(OPENINF)))
    assert len(read_file(_write(tmp_path, data)).spans) == 10


def test_truncated_length_delimited_file_is_rejected(tmp_path: Path) -> None:
    data = length_delimited(_pb(GENAI), _pb(OPENINF))[:-10]
    with pytest.raises(DecodeError, match="not an OTLP file"):
        read_file(_write(tmp_path, data))


def test_jsonl_mixing_traces_and_logs(tmp_path: Path) -> None:
    lines = [
        orjson.dumps(orjson.loads((FIXTURES / f"{GENAI}.json").read_bytes())),
        orjson.dumps(orjson.loads((FIXTURES / LOGS_FIXTURE).read_bytes())),
        b"",
        orjson.dumps(orjson.loads((FIXTURES / f"{OPENINF}.json").read_bytes())),
    ]
    d = read_file(_write(tmp_path, b"\n".join(lines) + b"\n"))
    assert (len(d.spans), len(d.logs)) == (10, 9)
    assert read_file(_write(tmp_path, gzip.compress(b"\n".join(lines)), "gz")) == d


def test_one_request_with_both_traces_and_logs(tmp_path: Path) -> None:
    obj = orjson.loads((FIXTURES / f"{GENAI}.json").read_bytes())
    obj.update(orjson.loads((FIXTURES / LOGS_FIXTURE).read_bytes()))
    d = read_file(_write(tmp_path, orjson.dumps(obj, option=orjson.OPT_INDENT_2)))
    assert (len(d.spans), len(d.logs)) == (5, 9)


def test_bad_line_in_jsonl_names_file_and_line(tmp_path: Path) -> None:
    good = (FIXTURES / JSONL_FIXTURE).read_bytes().rstrip(b"\n").split(b"\n")
    data = b"\n".join([good[0], good[1], b'{"resourceSpans": [', good[2]])
    path = _write(tmp_path, data, "export.jsonl")
    with pytest.raises(DecodeError) as info:
        read_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: line 3: invalid JSON")
    assert "\n" not in message


def test_structurally_bad_line_in_jsonl(tmp_path: Path) -> None:
    good = (FIXTURES / JSONL_FIXTURE).read_bytes().split(b"\n")[0]
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "kind": "SPAN_KIND_NOPE"}
    data = good + b"\n" + orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    with pytest.raises(DecodeError, match=r": line 2: invalid OTLP/JSON traces request"):
        read_file(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b'{"resourceSpans": [{"scopeSpans": [', r"invalid JSON \(.*line 1"),
        (b'{\n  "resourceSpans": [\n    {,\n  ]\n}\n', r"invalid JSON"),
        (b"[1, 2, 3]", r"not an OTLP file \(a JSON list"),
        (b"hello world, this is a text file\n", r"not an OTLP file"),
        (b"\x28\xb5\x2f\xfd\x00\x00", r"zstd"),
        (b"\x1f\x8b\x08\x00garbage", r"invalid gzip data"),
        (b'{"resourceSpans": 5}', r"resourceSpans must be a list"),
    ],
)
def test_bad_files_give_one_line_decode_errors(tmp_path: Path, data: bytes, match: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(DecodeError, match=match) as info:
        read_file(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)


def test_truncated_protobuf_is_rejected(tmp_path: Path) -> None:
    data = _pb(OPENINF)
    with pytest.raises(DecodeError, match="not an OTLP file"):
        read_file(_write(tmp_path, data[: len(data) // 2]))


def test_random_bytes_are_not_otlp(tmp_path: Path) -> None:
    rng = random.Random(1234)
    for size in (1, 7, 64, 1000, 20_000):
        data = bytes(rng.randrange(256) for _ in range(size))
        if data[:2] in (b"\x1f\x8b",):
            continue
        with pytest.raises(DecodeError, match="not an OTLP file"):
            read_file(_write(tmp_path, data))


def test_json_object_that_is_not_otlp(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="without resourceSpans or resourceLogs"):
        read_file(FIXTURES / NOT_OTLP_JSON)


def test_empty_files_and_empty_requests_decode_to_nothing(tmp_path: Path) -> None:
    for data in (b"", b"\n\n", b"{}", b'{"resourceSpans": []}', b'{"resourceMetrics": []}'):
        assert read_file(_write(tmp_path, data)) == Decoded()
    assert read_file(_write(tmp_path, gzip.compress(b""))) == Decoded()


def test_utf8_bom_and_leading_whitespace(tmp_path: Path) -> None:
    raw = (FIXTURES / f"{GENAI}.json").read_bytes()
    assert len(read_file(_write(tmp_path, b"\xef\xbb\xbf\n  " + raw)).spans) == 5


def test_unreadable_path(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="cannot read"):
        read_file(tmp_path)  # a directory


def test_iter_input_files_walks_sorted_and_skips_hidden(tmp_path: Path) -> None:
    for rel in ["b/2.json", "b/1.pb", "a.jsonl", ".hidden.json", "b/.cache/x.json", "c/d/e.pb"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"")
    single = tmp_path / ".explicit.json"
    single.write_bytes(b"")
    files = iter_input_files([tmp_path, str(single), tmp_path / "a.jsonl"])
    assert files == [
        tmp_path / "a.jsonl",
        tmp_path / "b/1.pb",
        tmp_path / "b/2.json",
        tmp_path / "c/d/e.pb",
        single,  # named explicitly: kept even though hidden
    ]


def test_iter_input_files_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(DecodeError, match=f"{missing}: no such file or directory"):
        iter_input_files([FIXTURES, missing])
