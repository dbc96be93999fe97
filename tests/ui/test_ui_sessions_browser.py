"""Conversations in the UI (issue 54), in a real browser (headless Chromium driven by Playwright
against ``tracereplay ui`` in a subprocess): a turn's run page shows the strip of its
conversation's turns, and the conversation page every turn with its tools and its answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from conversation import SESSION, TURNS, turn_run_ids, write_conversation
from headless_chromium import requires_chromium, requires_playwright
from sql_pipeline import tracereplay
from ui_helpers import client_for, ui_server

from tracereplay.store import Store

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass


@pytest.fixture
def conversation_db(fresh_db: Path, tmp_path: Path) -> Path:
    """The ingested fixtures (whose GenAI captures name session conv-demo-1) plus a
    three-turn conversation."""
    tracereplay(fresh_db, "ingest", str(write_conversation(tmp_path / "conv.json")))
    return fresh_db


@requires_chromium
@requires_playwright
@pytest.mark.slow
def test_turn_strip_and_conversation_page(conversation_db: Path, page: Page) -> None:
    first, second, third = turn_run_ids()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with ui_server(conversation_db) as base:
        page.goto(f"{base}/runs/{second}")
        strip = page.locator("#turns")
        expect(strip).to_contain_text(f"Conversation {SESSION} turn 2 of 3")
        expect(strip.locator("li.current")).to_contain_text("And tomorrow?")
        expect(strip.locator("li.current")).to_contain_text("(this run)")
        page.locator("#next-turn").click()
        expect(page).to_have_url(f"{base}/runs/{third}")
        expect(page.locator("#turns")).to_contain_text("turn 3 of 3")
        page.locator("#previous-turn").click()
        expect(page).to_have_url(f"{base}/runs/{second}")

        page.locator("#session-link").click()
        expect(page).to_have_url(f"{base}/sessions/{SESSION}")
        expect(page.locator("h1")).to_have_text(f"Conversation {SESSION}")
        expect(page.locator("#turn-count")).to_have_text("3 turns")
        cards = page.locator(".turn-card")
        expect(cards).to_have_count(3)
        for n, (question, answer) in enumerate(TURNS):
            card = cards.nth(n)
            expect(card.locator("h2")).to_contain_text(f"Turn {n + 1} success")
            expect(card.locator(".turn-query")).to_have_text(question)
            expect(card.locator(".tool")).to_contain_text("get_weather")
            expect(card.locator(".turn-answer")).to_have_text(answer)
        cards.nth(0).locator("h2 a").click()
        expect(page).to_have_url(f"{base}/runs/{first}")
        expect(page.locator("#turns")).to_contain_text("turn 1 of 3")
    assert errors == []


def test_a_run_of_no_session_has_no_strip_and_an_unknown_session_is_404(
    conversation_db: Path,
) -> None:
    with client_for(conversation_db) as client:
        with_session = client.get(f"/runs/{turn_run_ids()[0]}")
        assert with_session.status_code == 200 and 'id="turns"' in with_session.text
        with Store.open(conversation_db) as store:
            [(alone_id,)] = store.con.execute(
                "SELECT run_id FROM runs WHERE session_id IS NULL ORDER BY run_id LIMIT 1"
            ).fetchall()
        alone = client.get(f"/runs/{alone_id}")
        assert alone.status_code == 200 and 'id="turns"' not in alone.text
        missing = client.get("/sessions/no-such-conversation")
        assert missing.status_code == 404
        assert "no live run belongs to session" in missing.text
        page = client.get("/sessions/conv-demo-1")  # the fixtures' GenAI captures
        assert page.status_code == 200 and "Conversation" in page.text
