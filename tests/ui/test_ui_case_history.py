"""A promoted turn's case page shows the conversation before its query (issue 54)."""

from __future__ import annotations

from pathlib import Path

from conversation import conversation_spans, turn_run_ids
from ui_helpers import client_for

from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.promote import promote_run
from tracereplay.store import Store


def test_the_case_page_shows_the_history(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with Store.open(db) as store:
        with store.transaction():
            ingest_batch(store, conversation_spans())
        first = promote_run(store, turn_run_ids()[0], suite_name="chat").case
        third = promote_run(store, turn_run_ids()[2], suite_name="chat").case
    with client_for(db) as client:
        page = client.get(f"/cases/{third.id}")
        alone = client.get(f"/cases/{first.id}")
    assert page.status_code == 200
    assert 'id="case-conversation"' in page.text and "4 messages" in page.text
    assert "Tomorrow Paris stays rainy, 11 °C." in page.text
    assert alone.status_code == 200 and 'id="case-conversation"' not in alone.text
