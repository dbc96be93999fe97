"""The fenced code blocks of a Markdown page, for the tests that run what the docs show."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


class Block(NamedTuple):
    lang: str  # the fence's info string ("" when none)
    line: int  # the line of the opening fence, from 1
    body: str


def code_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in page order."""
    text = path.read_text(encoding="utf-8")
    return [
        Block(m.group(1), text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in BLOCK.finditer(text)
    ]
