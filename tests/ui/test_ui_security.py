"""Who may use the server: the loopback/token rule, the token on every request, the Host header
and the origin of form posts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from ui_helpers import client_for

from tracereplay.errors import BadParameterError
from tracereplay.ui.app import create_app
from tracereplay.ui.config import UiConfig, check_bind, is_loopback


@pytest.mark.parametrize(
    "host, loopback",
    [("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("192.168.1.4", False), ("::", False),
     ("example.com", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_host_other_than_loopback_needs_a_token() -> None:
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "secret")
    with pytest.raises(BadParameterError, match="--token"):
        check_bind("0.0.0.0", None)
    with pytest.raises(BadParameterError, match="must not be empty"):
        check_bind("127.0.0.1", "  ")


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "ui", *args],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "TRACEREPLAY_UI_TOKEN": ""},
    )  # fmt: skip


def test_cli_refuses_a_public_host_without_token(pipeline_db: Path) -> None:
    proc = _cli(pipeline_db, "--host", "0.0.0.0")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --host 0.0.0.0 is reachable from other machines")
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_cli_reports_a_taken_port_on_one_line(pipeline_db: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = _cli(pipeline_db, "--port", str(port))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")


def test_cli_needs_an_existing_store(tmp_path: Path) -> None:
    proc = _cli(tmp_path / "missing.duckdb")
    assert proc.returncode == 2 and "no tracereplay store" in proc.stderr
    assert not (tmp_path / "missing.duckdb").exists()


def _token_client(db: Path) -> TestClient:
    app = create_app(UiConfig(db=db, host="0.0.0.0", token="s3cret"))
    return TestClient(app, base_url="http://10.1.2.3:8765", follow_redirects=False)


def test_the_token_is_checked_on_every_request(pipeline_db: Path) -> None:
    with _token_client(pipeline_db) as client:
        for path in ("/runs", "/static/ui.css", "/sql", "/nope"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert "runs" not in response.text.lower() or path == "/runs"
        assert client.get("/runs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_token_login_sets_a_cookie_and_drops_it_from_the_url(pipeline_db: Path) -> None:
    with _token_client(pipeline_db) as client:
        assert client.get("/runs?token=wrong").status_code == 401
        login = client.get("/runs?status=failed&token=s3cret")
        assert login.status_code == 303
        assert login.headers["location"] == "/runs?status=failed"
        cookie = login.headers["set-cookie"]
        assert "tracereplay_ui_token=s3cret" in cookie and "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower()
        # the client keeps the cookie: every later request is let in
        assert client.get("/runs").status_code == 200
        assert client.get("/static/ui.js").status_code == 200


def test_loopback_server_refuses_other_host_names(pipeline_db: Path) -> None:
    app = create_app(UiConfig(db=pipeline_db))
    with TestClient(app, base_url="http://attacker.example:8765") as client:
        response = client.get("/runs")
        assert response.status_code == 421 and "loopback only" in response.text
    with TestClient(app, base_url="http://localhost:8765") as client:
        assert client.get("/runs").status_code == 200


def test_cross_site_form_posts_are_refused(pipeline_copy: Path) -> None:
    with client_for(pipeline_copy) as client:
        headers = {"Origin": "http://evil.example"}
        response = client.post("/runs/promote", data={"suite_new": "x"}, headers=headers)
        assert response.status_code == 403
        same = {"Origin": "http://127.0.0.1:8765"}
        response = client.post("/sql", data={"sql": "SELECT 1"}, headers=same)
        assert response.status_code == 200
