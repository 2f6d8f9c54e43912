"""Small pieces of Markdown the generated pages share, and the generated sections of hand-written pages."""

from __future__ import annotations

import re

# A generated section: <!-- generated:NAME (make docs) --> ... <!-- generated:NAME end -->
_SECTION = re.compile(
    r"(<!-- generated:(?P<name>[\w-]+) \(make docs\) -->\n)(?P<body>.*?)(<!-- generated:(?P=name) end -->)",
    re.S,
)


def cell(text: str) -> str:
    """``text`` for a table cell: pipes escaped, on one line."""
    return " ".join(text.split()).replace("|", "\\|")


def sections(text: str) -> dict[str, str]:
    """The generated sections of a page: name -> body."""
    return {m["name"]: m["body"] for m in _SECTION.finditer(text)}


def with_sections(text: str, bodies: dict[str, str]) -> str:
    """``text`` with each generated section whose name is in ``bodies`` replaced by that body."""

    def replace(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in bodies:
            return m.group(0)
        body = bodies[name].rstrip("\n") + "\n"
        return f"{m.group(1)}{body}{m.group(4)}"

    return _SECTION.sub(replace, text)
