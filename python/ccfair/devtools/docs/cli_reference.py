"""The command-line reference, from the argument parser itself (``ccfair.cli.build_parser``): every
subcommand with its description, usage, options (value, default, meaning) and examples."""

from __future__ import annotations

import argparse

from ccfair.cli import build_parser
from ccfair.devtools.docs.markdown import cell


def _subcommands(
    parser: argparse.ArgumentParser,
) -> tuple[argparse._SubParsersAction[argparse.ArgumentParser], dict[str, str]]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {str(c.dest): str(c.help or "") for c in action._choices_actions}
    return action, helps


def _value(action: argparse.Action) -> str:
    """What an option takes: its metavar or choices, nothing for a switch."""
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return " \\| ".join(f"`{c}`" for c in action.choices)
    metavar = action.metavar or action.dest.upper()
    text = " ".join(metavar) if isinstance(metavar, tuple) else str(metavar)
    if action.nargs in ("*", "+"):
        text += " ..."
    return f"`{text}`"


def _default(action: argparse.Action) -> str:
    default = action.default
    if action.nargs == 0 or default is None or default is argparse.SUPPRESS or default == []:
        return ""
    return f"`{default}`"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    return " ".join(formatter._expand_help(action).split()) if action.help else ""


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| Option | Value | Default | Meaning |", "|---|---|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        name = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
        value = "" if not action.option_strings else _value(action)
        rows.append(f"| {name} | {value} | {cell(_default(action))} | {cell(_help(parser, action))} |")
    return rows


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    epilog = parser.epilog or ""
    if "examples:" not in epilog:
        return []
    lines = [line for line in epilog.split("examples:", 1)[1].splitlines() if line.strip()]
    return ["Examples:", "", "```console", *(line.strip() for line in lines), "```", ""]


def render() -> str:
    parser = build_parser()
    action, helps = _subcommands(parser)
    out = [
        f"`{parser.prog}` ({parser.description.rstrip('.') if parser.description else ''}): "
        "every subcommand and option, as `ccfair SUBCOMMAND --help` prints them.",
        "",
        "| Subcommand | What it does |",
        "|---|---|",
    ]
    for name in action.choices:
        out.append(f"| [`{name}`](#ccfair-{name}) | {cell(helps.get(name, ''))} |")
    out.append("")
    out.append("Every subcommand also takes `-h`, `--help`; `ccfair --version` prints the version.")
    out.append("")
    for name, sub in action.choices.items():
        usage = " ".join(sub.format_usage().removeprefix("usage: ").split())
        out += [f"## ccfair {name}", "", " ".join((sub.description or "").split()), ""]
        out += ["```text", usage, "```", ""]
        out += _options_table(sub)
        out.append("")
        out += _examples(sub)
    return "\n".join(out).rstrip() + "\n"
