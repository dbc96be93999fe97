"""``store/open.py``: the drain is a hook ingest registers; without it, asking for a drain is
an error rather than a silent read of a store missing what agents spooled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from tracereplay.store.open import open_store
try:
    with open_store(sys.argv[1]):
        pass
except RuntimeError as exc:
    print("refused:", exc)
with open_store(sys.argv[1], drain=False):
    print("opened without a drain")
import tracereplay.ingest
with open_store(sys.argv[1]):
    print("drained")
print("tracereplay.convert" in sys.modules)
"""


def test_open_store_runs_the_drain_ingest_registers(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "t.duckdb")],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()  # fmt: skip
    assert out[0].startswith("refused: open_store(drain=True) with no drain registered")
    assert out[1:] == ["opened without a drain", "drained", "False"]  # empty spool: no converter
