"""How ``--help`` names values, the same way in every command.

typer labels every value by its Python type (``<str>``, ``<bool>`` even for a flag) and names
arguments differently in the usage line (``{run_id}``) and the table (``run_id``). Here:

- a flag shows no value; a choice lists its values (``table|json``); a number is ``N`` (or
  ``NUMBER``); a path ``PATH``; any other value the option's name in capitals (``--agent AGENT``);
  an option's own ``metavar`` wins;
- an argument is its name in capitals everywhere: ``RUN_ID``, ``[RUN_ID]`` when optional,
  ``PATHS...`` when it takes several (its help says what it is; no type label);
- prose reflows to the terminal's width: a paragraph's line breaks in a docstring are not kept
  (typer keeps them after the first paragraph, so text wrapped at 100 columns breaks raggedly
  at 80); an indented paragraph (the examples) and ``- `` list items keep their lines;
- options are two columns, the option with its value and its help: typer's five columns (long
  and short names, negative names, type, help) leave a 20-character help column at 80 columns.
  An option too long for the first column has its help on the next line.

typer's ``rich_utils`` (rich's markdown and traceback renderers with it, a tenth of a second)
and the rich classes used here are imported, and patched, on the first help that is
formatted: a command that prints no help does not import them.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from typer import core

if TYPE_CHECKING:  # imported with typer's rich_utils, on the first help (_patch_rich_utils)
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

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


def _reflow(paragraph: str) -> str:
    """One paragraph as the terminal should wrap it: kept as written when it starts with
    ``\\b`` or any line is indented (examples, tables); else its lines joined, a ``- `` line
    starting a new list item."""
    lines = paragraph.split("\n")
    if paragraph.startswith("\b"):
        return paragraph.strip("\b\n")
    if any(line[:1].isspace() for line in lines if line.strip()):
        return paragraph
    items: list[str] = []
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if items and not text.startswith("- "):
            items[-1] += " " + text
        else:
            items.append(text)
    return "\n".join(items)


def _fix_linebreaks(paragraphs: list[str], markup_mode: Any) -> str:
    # typer dedents the result with ``inspect.cleandoc``, which skips the first line: a blank
    # first line (dropped there) keeps the examples' indentation when only the first
    # paragraph is not indented
    return "\n" + "\n\n".join(_reflow(p) for p in paragraphs)


def _make_command_help(*, help_text: str, markup_mode: Any) -> Any:
    """A command's line in its group's list: its first paragraph, reflowed (typer keeps its
    line breaks in rich mode)."""
    first, sep, rest = inspect.cleandoc(help_text).partition("\n\n")
    return _TYPER_COMMAND_HELP[0](help_text=_reflow(first) + sep + rest, markup_mode=markup_mode)


#: the option column's share of the width at most; a longer option puts its help below it
_OPTION_SHARE = 0.38


def _option_label(param: Any, ctx: Any) -> Text:
    """``-o, --output PATH``, ``--fail-fast/--no-fail-fast``, or an argument's ``SUITE``."""
    if isinstance(param, core.TyperArgument):
        name = param.display_name_raw
        if param.metavar is None and param.nargs != 1:
            name += "..."
        return Text(name, style=rich_utils.STYLE_OPTION)
    short = [o for o in param.opts if not o.startswith("--")]
    long = [o for o in param.opts if o.startswith("--")]
    label = Text()
    if short:
        label.append(", ".join(short), style=rich_utils.STYLE_SWITCH)
        if long:
            label.append(", ")
    label.append(", ".join(long), style=rich_utils.STYLE_OPTION)
    negative = [o for o in param.secondary_opts if o.startswith("--")]
    if negative:
        label.append("/")
        label.append(", ".join(negative), style=rich_utils.STYLE_NEGATIVE_OPTION)
    value = param.display_type_rich(ctx=ctx)
    if value:
        label.append(" ")
        label.append(value, style=rich_utils.STYLE_TYPES)
    return label


def _print_options_panel(
    *, name: str, params: list[Any], ctx: Any, markup_mode: Any, console: Any
) -> None:
    """An options (or arguments) panel in two columns; see the module's docstring."""
    if not params:
        return
    rows = []
    for param in params:
        label = _option_label(param, ctx)
        pieces = rich_utils._get_parameter_help(
            param=param, ctx=ctx, markup_mode=markup_mode
        ).renderables
        range_str = param._get_number_range_help_str()
        if range_str:
            pieces.append(Text(f"[{range_str}]", style="dim"))
        # one paragraph: the help, then its default and range, wrapped together
        help_text = Text(" ").join(p for p in pieces if isinstance(p, Text))
        rows.append((label, help_text))
    inner = console.width - 4  # the panel's border and padding
    cap = max(12, int(inner * _OPTION_SHARE))
    width = min(cap, max(len(label) for label, _ in rows))

    def new_table() -> Table:
        table = Table(show_header=False, box=None, expand=True, pad_edge=False, padding=(0, 1))
        table.add_column(no_wrap=True, width=width)
        table.add_column(ratio=1)
        return table

    parts: list[Any] = [new_table()]
    for label, help_text in rows:
        if len(label) > width:  # too long: alone on its line, the help below it
            parts += [label, new_table()]
            parts[-1].add_row("", help_text)
        else:
            parts[-1].add_row(label, help_text)
    console.print(
        Panel(
            Group(*(p for p in parts if not isinstance(p, Table) or p.row_count)),
            border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER,
            title=name,
            title_align=rich_utils.ALIGN_OPTIONS_PANEL,
        )
    )


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
    for cls in (core.TyperCommand, core.TyperGroup):
        cls.format_help = _patching_rich_utils(cls.format_help)  # type: ignore[method-assign]
    _installed = True


#: typer's own ``_make_command_help``, once ``rich_utils`` is patched
_TYPER_COMMAND_HELP: list[Any] = []


def _patching_rich_utils(format_help: Any) -> Any:
    """``format_help`` that first imports and patches typer's ``rich_utils`` (once)."""

    def patched(self: Any, ctx: Any, formatter: Any) -> Any:
        _patch_rich_utils()
        return format_help(self, ctx, formatter)

    return patched


def _patch_rich_utils() -> None:
    global rich_utils, Group, Panel, Table, Text
    if _TYPER_COMMAND_HELP:
        return
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

    _TYPER_COMMAND_HELP.append(rich_utils._make_command_help)
    rich_utils._fix_linebreaks = _fix_linebreaks  # type: ignore[assignment]
    rich_utils._make_command_help = _make_command_help  # type: ignore[assignment]
    rich_utils._print_options_panel = _print_options_panel  # type: ignore[assignment]
