"""``tracereplay llm-server --suite SUITE``: a suite's recorded LLM calls served on loopback
(``replay/answering/llm/server.py``), one case at a time, for an agent run by a test runner of
its own."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from tracereplay.cli import options
from tracereplay.cli.common import db_path
from tracereplay.cli.options import LlmMatchOption
from tracereplay.errors import BadParameterError

if TYPE_CHECKING:
    from tracereplay.replay.answering.llm.server import ServedCase


def llm_server_command(
    suite: Annotated[
        str,
        typer.Option(
            "--suite", "-s", metavar="SUITE", help="The suite (name or id prefix) to serve."
        ),
    ],
    case: Annotated[
        Optional[str],
        typer.Option(
            "--case",
            metavar="ID|SEQ",
            help="Serve this case (its seq, or an id prefix) from the start; without it a test "
            "runner selects each case: POST /tracereplay/case/{id-or-seq}.",
            show_default=False,
        ),
    ] = None,
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")
    ] = 8787,
    llm_match: Annotated[Optional[LlmMatchOption], options.llm_match()] = None,
    llm_until: Annotated[
        Optional[int],
        options.llm_until(
            "Fork at LLM call N: calls 1..N answered from the recording, the later ones "
            "forwarded to the real API (--upstream) with the agent's own API key."
        ),
    ] = None,
    upstream: Annotated[
        Optional[str],
        typer.Option(
            metavar="URL",
            help="With --llm-until: where calls past the fork go (default: each API's own, "
            "https://api.openai.com, https://api.anthropic.com...).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve a suite's recorded LLM calls on 127.0.0.1, one case at a time: a model server
    for an agent your own test runner runs, in any language.

    It speaks the OpenAI (Chat Completions and Responses), Anthropic Messages, Gemini,
    Bedrock Converse and Cohere v2 wires, streamed or not, as `eval --llm recorded` does in
    process; prompt drift, an extra call and --llm-until work the same. It prints the
    variables to export (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, and
    placeholder API keys), then serves one case at a time until Ctrl-C.

    Control API (for a test runner): POST /tracereplay/case/{id-or-seq} selects a case (again:
    starts it over) and returns its query; GET /tracereplay/report returns the current case's
    LLM report (drift, errors, unused calls) as JSON; GET /tracereplay/cases lists the cases.
    A model request with no case selected gets a 409 in the API's error shape.

    Exit codes: 0 stopped with Ctrl-C; 2 bad input (unknown suite or case, port in use).

    [bold]Examples[/bold]

      tracereplay llm-server --suite weather --case 0
      tracereplay llm-server --suite weather --port 0  # select cases by HTTP
      curl -X POST http://127.0.0.1:8787/tracereplay/case/2
      curl http://127.0.0.1:8787/tracereplay/report
    """
    from tracereplay.replay.answering.llm.server import CaseNotFound, LlmServer, find_case

    if upstream is not None and llm_until is None:
        raise BadParameterError("--upstream goes with --llm-until (only forked calls go there)")
    cases, suite_name = _load(suite)
    first = None
    if case is not None:
        try:
            first = find_case(cases, case)
        except CaseNotFound as exc:
            raise BadParameterError(f"--case: {exc}") from None
    apis = ("chat", "responses", "anthropic", "gemini", "cohere")
    try:
        server = LlmServer(
            port=port,
            cases=cases,
            match=llm_match.value if llm_match is not None else "order",  # type: ignore[arg-type]
            until=llm_until,
            upstream={api: upstream for api in apis} if upstream else None,
        )
    except OSError as exc:
        raise BadParameterError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    server.serve(first)
    chosen = (
        f"serving case {first.seq} ({first.case_id[:8]}): {first.query[:60]!r}"
        if first is not None
        else "no case selected: POST /tracereplay/case/{id-or-seq}"
    )
    lines = [
        f"tracereplay llm-server: suite {suite_name}, {len(cases)} case(s); {chosen}",
        f"listening on {server.url}",
        *(f"export {name}={value}" for name, value in server.env().items()),
        "Ctrl-C stops it.",
    ]
    print("\n".join(lines), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("tracereplay llm-server: stopped", file=sys.stderr, flush=True)


def _load(suite_ident: str) -> tuple[list[ServedCase], str]:
    from tracereplay.replay.answering.llm.server import load_cases
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        cases, name = load_cases(store, suite_ident)
    if not cases:
        raise BadParameterError(f"suite {name} has no cases")
    return cases, name


def register(app: typer.Typer) -> None:
    app.command("llm-server")(llm_server_command)
