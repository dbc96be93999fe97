"""Fixtures for the monitor tests: a loopback judge model, the environment of a user's shell."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_judge import FakeJudge


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "http_proxy", "HTTP_PROXY", "TRACEREPLAY_DB"):
        monkeypatch.delenv(var, raising=False)
    server = FakeJudge()
    yield server
    server.close()
