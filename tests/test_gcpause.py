"""The decoders pause the cyclic GC while they run and always restore its previous state."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tracereplay.errors import DecodeError
from tracereplay.gcpause import gc_paused
from tracereplay.otlp import decode_traces_json, decode_traces_pb

FIXTURES = Path(__file__).parent / "fixtures" / "otlp"


def test_gc_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # was disabled by someone else: left disabled
    finally:
        gc.enable()


def test_gc_is_enabled_again_after_decoding_and_after_errors() -> None:
    data = (FIXTURES / "generated-otel-genai-latest__agent_tool_calls.pb").read_bytes()
    assert len(decode_traces_pb(data).spans) == 5
    assert gc.isenabled()
    with pytest.raises(DecodeError):
        decode_traces_json(b'{"resourceSpans": 1}')
    assert gc.isenabled()
