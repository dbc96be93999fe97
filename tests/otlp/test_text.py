"""Lone surrogates where spans come in (``otlp/text``): replaced by U+FFFD, the rest kept."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.otlp.text import loads, valid_text, valid_values

_any_text = st.text(st.characters(blacklist_categories=()), max_size=10)  # surrogates included
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | _any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any_text, inner, max_size=3),
    max_leaves=12,
)


def _replaced(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


@given(_any_text)
def test_valid_text_replaces_each_lone_surrogate_and_keeps_the_rest(text: str) -> None:
    out = valid_text(text)
    out.encode("utf-8")  # what every encoding and the store need
    assert out == _replaced(text)


@given(_json)
def test_loads_reads_what_json_stringify_writes_with_each_lone_surrogate_replaced(
    value: Any,
) -> None:
    """``json.dumps`` escapes a lone surrogate as JavaScript's ``JSON.stringify`` does."""
    out = loads(json.dumps(value).encode())
    assert out == valid_values(value)
    orjson.dumps(out)  # valid text throughout


@pytest.mark.parametrize("bad", [b'{"a": "\\ud83d"', b'{"a": NaN, "b": "\\ud83d"}', b"[1,]"])
def test_loads_still_refuses_what_is_not_json(bad: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        loads(bad)
