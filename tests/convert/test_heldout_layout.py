"""Every held-out capture is complete: its truth file is well-formed and names payloads that
exist, and the scorer runs over it. The score itself is not asserted (the held-out set
measures the rules; see tests/fixtures/heldout/README.md)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from heldout_score import HELDOUT, score_folder

FOLDERS = sorted(p for p in HELDOUT.iterdir() if p.is_dir())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_heldout_capture_is_complete(folder: Path) -> None:
    expected = orjson.loads((folder / "expected.json").read_bytes())
    assert expected["agent"] and expected["telemetry"]
    assert expected["shapes"], "no shape"
    for shape, truth in expected["shapes"].items():
        assert any((folder / truth["folder"]).glob("*-traces.*")), f"{shape}: no payload"
        for call in truth.get("tool_calls") or []:
            assert set(call) >= {"name", "arguments"}, call
    assert (folder / "README.md").is_file()
    assert not (folder / "node_modules").exists()
    right, total, lines = score_folder(folder)
    assert total == len(expected["shapes"]) and len(lines) == total + 1
