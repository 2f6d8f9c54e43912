"""The one error type for bad input: a field (a dotted path into the scenario or plan, or a command-line
option) and what is wrong with it. ``ScenarioError`` is its former name, kept as an alias."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input. ``field`` is a dotted path such as ``flows[1].rtt`` or ``link.buffer``, or an option
    such as ``--jobs``; ``str(err)`` is ``"field: message"``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        return (InputError, (self.field, self.message))


# The name before input errors also covered command-line options; existing code catching it keeps working.
ScenarioError = InputError


class OutputError(InputError):
    """Writing output failed for a reason outside the input (a full disk, an I/O error); ``field`` names
    the option that chose the output. The command line exits with 1 rather than 2 for it."""
