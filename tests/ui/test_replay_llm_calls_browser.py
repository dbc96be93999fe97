"""A replay of an agent whose LLM client nobody instruments shows its LLM rounds on the run
page (issue 50): each round's call, and what answered it, in a real browser."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from headless_chromium import requires_chromium, requires_playwright
from offline_store import offline_store, scripted_server
from ui_helpers import ui_server

from tracereplay.store.open import open_store

try:
    from playwright.sync_api import Page, expect
except ImportError:  # pragma: no cover - the test extra installs it
    pass

pytestmark = [requires_chromium, requires_playwright, pytest.mark.slow]

AGENTS = Path(__file__).resolve().parents[1] / "evaluate" / "agents"


def test_a_forked_replay_shows_its_rounds_and_what_answered_them(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, page: Page
) -> None:
    db = offline_store(tmp_path_factory)
    server, url = scripted_server().start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
        env.update(PYTHONPATH=str(AGENTS), OPENAI_BASE_URL=url)
        done = subprocess.run(
            [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather-offline",
             "--agent", "bare_openai_loop:answer", "--llm", "recorded", "--llm-until", "1"],
            capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path),
        )  # fmt: skip
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(db) as store:
        run_id = store.con.execute(
            "SELECT run_id FROM runs WHERE kind = 'replay' ORDER BY total_llm_calls DESC, run_id"
            " LIMIT 1"
        ).fetchall()[0][0]
    with ui_server(db) as base:
        page.goto(f"{base}/runs/{run_id}")
        rounds = page.locator("h3", has_text="Round")
        expect(rounds.first).to_contain_text("answered by recording")
        expect(rounds.nth(1)).to_contain_text("answered by live")
        assert "no LLM span recorded" not in page.inner_text("body")
        box = rounds.first.locator(".llm-source").bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0
