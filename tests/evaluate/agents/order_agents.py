"""SDK agents for the airtight / fidelity replay tests (``--agent order_agents:NAME``).

``lookup_order`` raises ``KeyError('no order 9999')`` for an unknown order: ``orders`` catches
it and answers with the error's class and text; ``orders_strict`` lets it end the run.
``escaping`` calls its tool under a plain OpenTelemetry ``execute_tool`` span, not through
``@tracereplay.tool`` (a tool no interceptor reaches). Real tool runs are counted in ``RAN``.
"""

from __future__ import annotations

from opentelemetry import trace

import tracereplay
from tracereplay.sdk import agent_run, tool

ORDERS = {"1001": "shipped", "1002": "packed"}
RAN: list[str] = []


@tool
def lookup_order(order_id: str) -> str:
    RAN.append(f"lookup_order({order_id})")
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return ORDERS[order_id]


def _order_id(query: str) -> str:
    return query.rsplit(" ", 1)[-1].strip("?")


@tracereplay.agent_run("orders")
def orders(query: str) -> str:
    try:
        return f"Order {_order_id(query)} is {lookup_order(_order_id(query))}."
    except KeyError as err:
        return f"{type(err).__name__}: {err}"


@tracereplay.agent_run("orders")
def orders_strict(query: str) -> str:
    return f"Order {_order_id(query)} is {lookup_order(_order_id(query))}."


def _escaping_tool(order_id: str) -> str:
    tracer = trace.get_tracer("my-app")
    with tracer.start_as_current_span(
        "execute_tool lookup_order",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.arguments": f'{{"order_id": "{order_id}"}}',
        },
    ) as span:
        RAN.append(f"escaping({order_id})")
        result = ORDERS.get(order_id, "unknown")
        span.set_attribute("gen_ai.tool.call.result", result)
        return result


def escaping(query: str) -> str:
    with agent_run("escaping", query) as run:
        answer = f"Order {_order_id(query)} is {_escaping_tool(_order_id(query))}."
        run.set_response(answer)
        return answer


def record(db: str, agent: str, queries: list[str]) -> None:
    """Run ``agent`` live for each query, recorded into ``db``."""
    tracereplay.configure(service_name="order-tests", db=db)
    fn = {"orders": orders, "orders_strict": orders_strict, "escaping": escaping}[agent]
    for q in queries:
        try:
            fn(q)
        except KeyError:
            pass
    tracereplay.flush()
