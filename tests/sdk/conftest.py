"""Fixtures for the SDK tests: a fresh TracerProvider per test, in-memory or spool export."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sdk_helpers import Recorded

import tracereplay
from tracereplay import sdk
from tracereplay.sdk.content import ContentPolicy, set_policy


@pytest.fixture(autouse=True)
def _reset_sdk() -> Iterator[None]:
    sdk.reset_stats()
    yield
    sdk.shutdown()
    set_policy(ContentPolicy())
    sdk.reset_stats()


@pytest.fixture
def configure_memory() -> Callable[..., Recorded]:
    """``configure_memory(**configure_kwargs)``: configure() with an in-memory exporter."""

    def make(**kwargs: Any) -> Recorded:
        exporter = InMemorySpanExporter()
        tracereplay.configure(
            service_name="sdk-test", tracer_provider=TracerProvider(), exporter=exporter, **kwargs
        )
        return Recorded(exporter)

    return make


@pytest.fixture
def recorded(configure_memory: Callable[..., Recorded]) -> Recorded:
    return configure_memory()
