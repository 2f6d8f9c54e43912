"""Text from untrusted sources made safe for a terminal: a results directory is anyone's (its plan names,
error messages, coordinates, any value a query returns), and a string holding ``ESC ] 0 ; ... BEL`` sets the
terminal's title, ``ESC [ 2 J`` clears it, and worse. :func:`printable` escapes every character Python does
not count as printable (the C0 and C1 controls, DEL, format characters such as the bidirectional overrides
that reorder what is shown, line and paragraph separators, unassigned and private-use code points), as
``ls`` and ``git`` quote control characters in file names: ``\\x1b``, ``\\u202e``, ``\\n``. Everything
printable, non-ASCII letters included, is kept as it is. The escaping is for display only and is not
reversible (a backslash is not doubled)."""

from __future__ import annotations

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object) -> str:
    """``str(text)`` with each character that is not printable written as its escape."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)


def printable_lines(text: str) -> str:
    """``text`` with its lines kept and everything else :func:`printable` (a message of several lines)."""
    return "\n".join(printable(line) for line in text.split("\n"))
