"""The TRACON document block format: exact, reversible, and plain text as one document."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracereplay.models import Document
from tracereplay.promote.documents import (
    BEGIN,
    END,
    DocumentFormatError,
    documents_to_text,
    format_documents,
    parse_documents,
)

# content and names built from the characters that could break a line-based format
_tricky = st.sampled_from(
    ["\n", "\r", "-", "- ", "-----", BEGIN, END, " ", '"', "name: x", "\u2028", "\x85"]
)
text = st.lists(st.one_of(st.text(max_size=12), _tricky), max_size=8).map("".join)
documents = st.lists(st.builds(Document, name=text, content=text), max_size=5)


@settings(max_examples=300)
@given(documents)
def test_blocks_parse_back_to_the_same_documents(docs: list[Document]) -> None:
    assert parse_documents(format_documents(docs)) == docs


@settings(max_examples=300)
@given(documents)
def test_text_form_reads_back_unchanged(docs: list[Document]) -> None:
    assert parse_documents(documents_to_text(docs)) == docs


@settings(max_examples=200)
@given(text.filter(lambda t: bool(t.strip()) and not t.lstrip().startswith(BEGIN)))
def test_plain_text_is_one_document_named_context(plain: str) -> None:
    assert parse_documents(plain) == [Document(name="context", content=plain)]
    assert documents_to_text([Document(name="context", content=plain)]) == plain


def test_the_block_layout_is_exactly_as_documented() -> None:
    docs = [
        Document(name="refund-policy.md", content="Refunds within 30 days.\n- no receipts\n"),
        Document(name=" padded", content=""),
    ]
    assert format_documents(docs) == (
        f"{BEGIN}\nname: refund-policy.md\n\nRefunds within 30 days.\n- - no receipts\n\n{END}\n"
        f'{BEGIN}\nname: " padded"\n\n\n{END}'
    )


def test_hand_written_blocks_with_blank_lines_between_them() -> None:
    written = f"\n{BEGIN}\nname: a\n\nalpha\n{END}\n\n\n{BEGIN}\nname: b\n\nbeta\ngamma\n{END}\n"
    assert parse_documents(written) == [
        Document(name="a", content="alpha"),
        Document(name="b", content="beta\ngamma"),
    ]


def test_blank_text_is_no_document() -> None:
    assert parse_documents("") == [] and parse_documents(" \n\t") == []
    assert format_documents([]) == ""


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        (f"{BEGIN}\nname: a\n\nno end", "not closed"),
        (f"{BEGIN}\nname: a\nno blank line\n{END}", "expected a 'name: ...' header"),
        (f"{BEGIN}\ntitle: a\n\nx\n{END}", "unknown document header 'title'"),
        (f"{BEGIN}\nname: a\n\n-raw dash\n{END}", "must be written as '- -...'"),
        (f"{BEGIN}\nname: a\n\nx\n{END}\ntrailing text", "line 6"),
        (f'{BEGIN}\nname: "unterminated\n\nx\n{END}', "bad quoted name"),
    ],
)
def test_broken_blocks_are_one_clear_error(broken: str, reason: str) -> None:
    with pytest.raises(DocumentFormatError, match="document text line") as info:
        parse_documents(broken)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)
