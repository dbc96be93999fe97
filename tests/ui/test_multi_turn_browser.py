"""A multi-turn case (issue 54) as a person sees it, in Chromium: the UI's case page shows the
conversation and each turn of its latest result with its verdict and answer; the HTML report
shows each turn of the case the same way. Asserted on the rendered text and geometry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conversation import SESSION, TURNS, write_conversation
from headless_chromium import requires_chromium, requires_playwright
from ui_helpers import ui_server

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]

AGENTS = Path(__file__).parents[1] / "evaluate" / "agents"
VIEWPORT = {"width": 1024, "height": 900}


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEREPLAY", "OTEL_"))}
    env.update(PYTHONPATH=str(AGENTS), COLUMNS="160")
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done


@pytest.fixture
def conversation_db(tmp_path: Path) -> Path:
    """The Paris conversation as one case, replayed by an agent that regressed in turn 1 with
    the agent's own answers as history (so every turn fails)."""
    db = tmp_path / "store.duckdb"
    _cli(db, "ingest", str(write_conversation(tmp_path / "conversation.json")))
    _cli(db, "promote", "--session", SESSION, "--suite", "chat")
    _cli(db, "eval", "chat", "--agent", "chat_agents:forgets_paris", "--history", "replayed")
    return db


def test_the_case_page_shows_each_turn(conversation_db: Path, page: Page) -> None:
    case_id = _cli(conversation_db, "sql", "SELECT case_id FROM eval_cases", "--format", "csv")
    case_id_text = case_id.stdout.split()[1]
    with ui_server(conversation_db) as base:
        page.goto(f"{base}/cases/{case_id_text}")
        conversation = page.locator("#case-turns")
        expect(conversation).to_contain_text("3 turns, replayed in order")
        for question, answer in TURNS:
            expect(conversation).to_contain_text(question)
            expect(conversation).to_contain_text(answer)
        turns = page.locator("#latest-result .rep.turn")
        expect(turns).to_have_count(3)
        for n, said in enumerate(["I don't know.", "Where?", "Which city do you mean?"]):
            turn = turns.nth(n)
            expect(turn.locator("h3").first).to_contain_text(f"Turn {n + 1}")
            expect(turn.locator("h3 .badge").first).to_have_text("FAILED")
            expect(turn.locator(".msg.user")).to_contain_text(TURNS[n][0])
            expect(turn.locator(".msg.assistant")).to_contain_text(said)
            box = turn.bounding_box()
            assert box is not None and box["x"] + box["width"] <= VIEWPORT["width"]
        # the turns read top to bottom in order
        tops = [turns.nth(n).bounding_box()["y"] for n in range(3)]  # type: ignore[index]
        assert tops == sorted(tops)


def test_the_report_shows_each_turn(conversation_db: Path, tmp_path: Path, page: Page) -> None:
    html = tmp_path / "report.html"
    _cli(conversation_db, "report", "--output", str(html))
    page.goto(html.as_uri())
    turns = page.locator(".turn[data-turn]")
    expect(turns).to_have_count(3)
    for n, said in enumerate(["I don't know.", "Where?", "Which city do you mean?"]):
        turn = turns.nth(n)
        expect(turn.locator("h3").first).to_contain_text(f"Turn {n + 1}")
        expect(turn.locator(".query")).to_have_text(TURNS[n][0])
        expect(turn.locator(".response")).to_have_text(said)
        expect(turn).to_be_visible()
