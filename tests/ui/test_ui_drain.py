"""A page never drains the spool (that converts spans into runs); the ``ui`` process's
``SpoolDrainer`` does, off the request path, and the runs then show on the pages."""

from __future__ import annotations

from pathlib import Path

from sql_pipeline import FIXTURES
from ui_helpers import client_for

from tracereplay.store import Store, spool
from tracereplay.store.paths import spool_dir
from tracereplay.ui.access import SpoolDrainer


def _runs(db: Path) -> int:
    with Store.open(db) as store:
        return int(store.con.execute("SELECT count(*) FROM runs").fetchall()[0][0])


def test_pages_do_not_drain_and_the_drainer_does(tmp_path: Path) -> None:
    db = tmp_path / "ui.duckdb"
    with Store.open(db):
        pass
    writer = spool.SpoolWriter(spool_dir(db))
    payload = (FIXTURES / "generated-openinference__agent_tool_calls.pb").read_bytes()
    writer.append(spool.KIND_TRACES_PB, payload)
    writer.close()

    with client_for(db) as client:
        assert client.get("/runs").status_code == 200
        assert _runs(db) == 0  # the request read the store as it was
        drainer = SpoolDrainer(db)
        assert drainer.drain_once()
        stored = _runs(db)
        assert stored > 0
        html = client.get("/runs").text
        assert f'id="total">{stored} run' in html
        assert drainer.drain_once()  # nothing new spooled: no round
        assert _runs(db) == stored
