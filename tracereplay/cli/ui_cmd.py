"""``tracereplay ui``: a local web application over the store."""

from __future__ import annotations

import socket
from typing import Annotated, Optional

import typer

from tracereplay.cli.common import db_path
from tracereplay.errors import TraceReplayError

#: what the ``ui`` extra installs (``multipart`` is python-multipart, for the UI's forms)
UI_MODULES = ("starlette", "uvicorn", "jinja2", "multipart")


class UiStartError(TraceReplayError):
    """The server could not start (the port is taken, the address is not this machine's)."""


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free port), or a one-line error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UiStartError(f"cannot listen on {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UiStartError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def ui(
    host: Annotated[
        str,
        typer.Option(help="Address to listen on. Anything but loopback needs --token."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8765,
    token: Annotated[
        Optional[str],
        typer.Option(
            envvar="TRACEREPLAY_UI_TOKEN",
            show_envvar=True,
            help="Require this token on every request: 'Authorization: Bearer TOKEN', or open "
            "the printed URL once (?token=TOKEN sets a cookie).",
            show_default=False,
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only", help="Turn editing off (promote, case edits): pages only read."
        ),
    ] = False,
) -> None:
    """Browse runs, promote them and follow eval scores in a browser.

    Serves a local web application over the store: runs with filters, search and facets, each
    run's trajectory and spans, promotion (one run or many), suites, cases, eval runs with trend
    charts, diffs, a production dashboard and a read-only SQL page. The store is opened per
    request only, so serve, ingest and agents keep writing while it runs; runs agents spool are
    drained into it in the background about every second. Ctrl-C stops it.

    [bold]Examples[/bold]

      tracereplay ui                          # http://127.0.0.1:8765/
      tracereplay --db demo-work/tracereplay.duckdb ui --port 0
      tracereplay ui --host 0.0.0.0 --token "$(openssl rand -hex 16)"
    """
    from tracereplay.extras import require_extra

    require_extra("ui", UI_MODULES, "tracereplay ui")
    from tracereplay.ui.config import UiConfig

    path = db_path()
    config = UiConfig(db=path, host=host, port=port, token=token, read_only=read_only)
    import uvicorn

    from tracereplay.ui.app import create_app

    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    typer.echo(f"tracereplay ui: {url}{'?token=' + token if token else ''}", err=False)
    store_shown = getattr(path, "shown", path)  # a server URL without its password
    typer.echo(
        f"store {store_shown}{' (read-only)' if read_only else ''}; Ctrl-C stops it", err=True
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
        )
    )
    from tracereplay.ui.access import SpoolDrainer

    drainer = SpoolDrainer(path)  # pages never drain: runs agents spool are stored from here
    drainer.start()
    try:
        server.run(sockets=[sock])
    finally:
        drainer.stop()
        sock.close()


def register(app: typer.Typer) -> None:
    app.command("ui")(ui)
