"""A monitor's definition: name, checks, selector, sampling rate; read from and written to a file.

The file is YAML or JSON: a ``checks:`` list written as in a suite file (read by the suite
file's own ``load_checks``, so every check kind and every option problem is found the same way)
and, optionally, the selector (``agent``, ``service``, ``where``) and ``sample``. ``monitor
show NAME`` prints this form, so a monitor can be kept under version control and created again.
"""

from __future__ import annotations

import re
from dataclasses import InitVar, dataclass, field
from datetime import datetime
from typing import Any

import yaml

from tracereplay.errors import BadParameterError
from tracereplay.models import CheckSpec
from tracereplay.promote.checks import validate_checks
from tracereplay.promote.suite_file import FileFormat, detect_format, dump_data, load_checks
from tracereplay.store.suites import check_to_dict

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
#: the fields a monitor file may hold besides ``checks``
SELECTOR_KEYS = ("agent", "service", "where", "sample")


class MonitorDefinitionError(BadParameterError):
    """A monitor name, file or option that cannot be used."""


@dataclass
class Monitor:
    """What a monitor judges (``checks``) and which live runs (selector and ``sample``)."""

    name: str
    checks: list[CheckSpec]
    agent: str | None = None
    service: str | None = None
    where: str | None = None
    sample: float = 1.0
    created_at: datetime | None = None
    updated_at: datetime | None = field(default=None, compare=False)
    #: False for a monitor read back from the store: a check whose custom module is gone
    #: then makes its own results ERROR instead of every page that lists monitors fail
    validate: InitVar[bool] = True

    def __post_init__(self, validate: bool) -> None:
        if not validate:
            return
        check_name(self.name)
        check_sample(self.sample)
        if not self.checks:
            raise MonitorDefinitionError(f"monitor {self.name!r} needs at least one check")
        validate_checks(self.checks)
        if self.where is not None and not self.where.strip():
            self.where = None

    @property
    def selector(self) -> str:
        """The selector in words, e.g. ``agent=weather, where status = 'failed', 10%``."""
        parts = [f"agent={self.agent}"] if self.agent else []
        parts += [f"service={self.service}"] if self.service else []
        parts += [f"where {self.where}"] if self.where else []
        parts.append(f"{self.sample:.0%}" if self.sample < 1 else "every run")
        return ", ".join(parts)

    def to_file_dict(self) -> dict[str, Any]:
        """The file form (what ``monitor show`` prints; ``monitor create --checks`` reads)."""
        data: dict[str, Any] = {"name": self.name}
        for key, value in (("agent", self.agent), ("service", self.service), ("where", self.where)):
            if value is not None:
                data[key] = value
        if self.sample != 1.0:
            data["sample"] = self.sample
        data["checks"] = [check_to_dict(c) for c in self.checks]
        return data

    def dump(self, fmt: FileFormat = "yaml") -> str:
        return dump_data(self.to_file_dict(), fmt)


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise MonitorDefinitionError(
            f"monitor name {name!r}: use letters, digits, '_', '-' or '.' (at most 100)"
        )
    return name


def check_sample(sample: float) -> float:
    if not 0.0 < sample <= 1.0:
        raise MonitorDefinitionError(
            f"--sample {sample:g}: give the share of runs to judge, above 0 and at most 1"
        )
    return sample


def read_monitor_file(text: str, source: str) -> tuple[list[CheckSpec], dict[str, Any]]:
    """The checks of a monitor file and its selector fields (those it gives)."""
    fmt = detect_format(source, text)
    checks = load_checks(text, fmt, source)
    try:
        data = yaml.safe_load(text)  # already read whole by load_checks: only the keys here
    except yaml.YAMLError:
        data = None
    selector: dict[str, Any] = {}
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"checks", "name", *SELECTOR_KEYS})
        if unknown:
            raise MonitorDefinitionError(
                f"{source}: unknown field {unknown[0]!r} (known: name, checks, "
                + ", ".join(SELECTOR_KEYS)
                + ")"
            )
        for key in SELECTOR_KEYS:
            if key in data and data[key] is not None:
                value = data[key]
                if key == "sample":
                    if isinstance(value, bool) or not isinstance(value, (int, float)):
                        raise MonitorDefinitionError(f"{source}: sample must be a number")
                    value = float(value)
                elif not isinstance(value, str):
                    raise MonitorDefinitionError(f"{source}: {key} must be text")
                selector[key] = value
    return checks, selector
