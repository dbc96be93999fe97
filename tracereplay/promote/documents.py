"""Context documents as text: the ``-----BEGIN TRACON DOCUMENT-----`` block format.

One block per document, lines separated by ``\\n``::

    -----BEGIN TRACON DOCUMENT-----
    name: refund-policy.md
    <one empty line>
    <content lines; a content line starting with "-" is written with "- " in front>
    -----END TRACON DOCUMENT-----

Blocks are joined by one ``\\n``. The name is written as is, or as a JSON string when it is
empty, starts with ``"``, has surrounding spaces or a control character. Content is exact: every
character survives (dash-escaping, as in OpenPGP, keeps a content line from ending the block).
Text made only of blocks (blank lines around them allowed) parses back to its documents; any
other non-blank text is one document named ``context``; blank text is no document.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tracereplay.errors import TraceReplayError
from tracereplay.models import Document

BEGIN = "-----BEGIN TRACON DOCUMENT-----"
END = "-----END TRACON DOCUMENT-----"
DEFAULT_NAME = "context"


class DocumentFormatError(TraceReplayError):
    """Text that starts like document blocks but is not well formed."""


def format_documents(documents: Sequence[Document]) -> str:
    """The block form of ``documents`` (``""`` for none); ``parse_documents`` reverses it."""
    return "\n".join(_format_block(doc) for doc in documents)


def parse_documents(text: str) -> list[Document]:
    """Documents from text: blocks give one document each, plain text one named ``context``.

    Raises ``DocumentFormatError`` for text that opens a block and then breaks the format.
    """
    if not text.strip():
        return []
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.strip())
    if lines[first] != BEGIN:
        return [Document(name=DEFAULT_NAME, content=text)]
    documents: list[Document] = []
    i = first
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if lines[i] != BEGIN:
            raise DocumentFormatError(
                f"document text line {i + 1}: expected {BEGIN} or the end, got {lines[i][:40]!r}"
            )
        doc, i = _parse_block(lines, i)
        documents.append(doc)
    return documents


def documents_to_text(documents: Sequence[Document]) -> str:
    """Text for ``documents`` as one string: a lone ``context`` document as its plain content
    (when that reads back unchanged), otherwise the block form. ``text_to_documents`` reverses it."""
    if len(documents) == 1 and documents[0].name == DEFAULT_NAME:
        plain = documents[0].content
        try:
            if parse_documents(plain) == [documents[0]]:
                return plain
        except DocumentFormatError:
            pass
    return format_documents(documents)


text_to_documents = parse_documents


def _format_name(name: str) -> str:
    needs_json = (
        not name
        or name.startswith('"')
        or name != name.strip()
        or any(ord(c) < 32 or ord(c) == 127 or c in "\u2028\u2029\x85" for c in name)
    )
    return json.dumps(name, ensure_ascii=False) if needs_json else name


def _format_block(doc: Document) -> str:
    body = "\n".join(
        ("- " + line) if line.startswith("-") else line for line in doc.content.split("\n")
    )
    return f"{BEGIN}\nname: {_format_name(doc.name)}\n\n{body}\n{END}"


def _parse_block(lines: list[str], start: int) -> tuple[Document, int]:
    """Parse the block opening at ``lines[start]``; return it and the index after its END."""
    i = start + 1
    name: str | None = None
    while i < len(lines) and lines[i] != "":
        header = lines[i]
        if header == END:
            raise DocumentFormatError(
                f"document text line {i + 1}: block has no empty line after its headers"
            )
        key, sep, value = header.partition(": ")
        if not sep and header.endswith(":"):
            key, value = header[:-1], ""
        elif not sep:
            raise DocumentFormatError(
                f"document text line {i + 1}: expected a 'name: ...' header, got {header[:40]!r}"
            )
        if key != "name":
            raise DocumentFormatError(
                f"document text line {i + 1}: unknown document header {key!r} (only 'name')"
            )
        if name is not None:
            raise DocumentFormatError(f"document text line {i + 1}: the name header is given twice")
        name = _parse_name(value, i)
        i += 1
    if i >= len(lines):
        raise DocumentFormatError(f"document text line {start + 1}: block is not closed by {END}")
    i += 1  # the empty line after the headers
    body: list[str] = []
    while i < len(lines) and lines[i] != END:
        line = lines[i]
        if line.startswith("-"):
            if not line.startswith("- "):
                raise DocumentFormatError(
                    f"document text line {i + 1}: a content line starting with '-' must be written as '- -...'"
                )
            line = line[2:]
        body.append(line)
        i += 1
    if i >= len(lines):
        raise DocumentFormatError(f"document text line {start + 1}: block is not closed by {END}")
    if not body:
        raise DocumentFormatError(
            f"document text line {i + 1}: block has no content line (write one empty line for empty content)"
        )
    return Document(name=DEFAULT_NAME if name is None else name, content="\n".join(body)), i + 1


def _parse_name(value: str, index: int) -> str:
    if not value.startswith('"'):
        return value
    try:
        name = json.loads(value)
    except ValueError:
        raise DocumentFormatError(
            f"document text line {index + 1}: bad quoted name {value[:40]!r}"
        ) from None
    if not isinstance(name, str):
        raise DocumentFormatError(f"document text line {index + 1}: bad quoted name {value[:40]!r}")
    return name
