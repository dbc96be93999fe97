"""OTLP decoders: protobuf and JSON traces/logs requests, and input files, → ``Span``/``LogRecord``.

Undecodable payloads raise ``tracereplay.errors.DecodeError`` (one-line reason); individual
invalid spans/log records are counted in ``Decoded.rejected_spans``/``rejected_logs``.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from tracereplay.otlp.files import decode_file_content, iter_input_files, read_file
from tracereplay.otlp.json_decode import decode_logs_json, decode_traces_json
from tracereplay.otlp.limits import DROPPED_ATTRIBUTES_KEY, apply_limits
from tracereplay.otlp.model import Decoded, Limits
from tracereplay.otlp.pb_decode import decode_logs_pb, decode_traces_pb

__all__ = [
    "DROPPED_ATTRIBUTES_KEY",
    "Decoded",
    "Limits",
    "apply_limits",
    "decode_file_content",
    "decode_logs_json",
    "decode_logs_pb",
    "decode_traces_json",
    "decode_traces_pb",
    "iter_input_files",
    "read_file",
]
