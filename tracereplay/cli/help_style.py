"""How ``--help`` names values, the same way in every command.

typer labels every value by its Python type (``<str>``, ``<bool>`` even for a flag) and names
arguments differently in the usage line (``{run_id}``) and the table (``run_id``). Here:

- a flag shows no value; a choice lists its values (``table|json``); a number is ``N`` (or
  ``NUMBER``); a path ``PATH``; any other value the option's name in capitals (``--agent AGENT``);
  an option's own ``metavar`` wins;
- an argument is its name in capitals everywhere: ``RUN_ID``, ``[RUN_ID]`` when optional,
  ``PATHS...`` when it takes several (its help says what it is; no type label).
"""

from __future__ import annotations

from typing import Any

from typer import core

_installed = False


def _option_value(self: Any, ctx: Any) -> str | None:
    if self.metavar is not None:
        return self.metavar
    if self.is_flag or self.count:
        return None
    label = self.display_type(ctx).strip("<>")
    desc = self.type_descriptor
    if desc.is_choice:
        value = label
    elif label.startswith("int"):
        value = "N"
    elif label.startswith("float"):
        value = "NUMBER"
    elif desc.is_path:
        value = "PATH"
    else:
        value = (self.name or "value").upper()
    return value + ("..." if self.nargs != 1 else "")


def _argument_name(self: Any) -> str:
    return self.metavar if self.metavar is not None else (self.name or "").upper()


def _argument_rich_name(self: Any) -> str:
    name = _argument_name(self)
    return name + "..." if self.metavar is None and self.nargs != 1 else name


def _argument_usage_name(self: Any) -> str:
    name = _argument_name(self)
    if not self.required:
        name = f"[{name}]"
    return name + "..." if self.nargs != 1 else name


def install() -> None:
    """Patch typer's parameter classes (once) so that help reads as described above."""
    global _installed
    if _installed:
        return
    core.TyperOption.display_type_rich = _option_value  # type: ignore[method-assign]
    core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
    core.TyperArgument._rich_display_name = _argument_rich_name  # type: ignore[method-assign]
    core.TyperArgument._usage_display_name = _argument_usage_name  # type: ignore[method-assign]
    core.TyperArgument.display_name_raw = property(_argument_name)  # type: ignore[assignment]
    _installed = True
