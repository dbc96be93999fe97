"""What ``tracereplay ui`` was started with, and the rule for where it may listen."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from tracereplay.errors import BadParameterError

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and the usual names of the loopback interface."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class UiConfig:
    """The server's settings; one instance per application."""

    db: Path
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    read_only: bool = False
    #: seconds a request waits for the store while another process holds it
    store_timeout: float = 30.0
    #: rows per page of the runs table, and its ceiling
    page_size: int = 50
    max_page_size: int = 500
    #: rows the SQL page shows at most
    sql_max_rows: int = 1000
    #: at most this many runs in one bulk promotion from the runs page
    bulk_limit: int = 1000

    def __post_init__(self) -> None:
        check_bind(self.host, self.token)


def check_bind(host: str, token: str | None) -> None:
    """A host other than loopback needs a token: anyone who can reach the port could read every
    run otherwise."""
    if token is not None and not token.strip():
        raise BadParameterError("--token must not be empty")
    if not is_loopback(host) and not token:
        raise BadParameterError(
            f"--host {host} is reachable from other machines: give --token SECRET too "
            "(or keep the default 127.0.0.1)"
        )
