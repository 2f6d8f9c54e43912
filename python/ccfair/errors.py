"""The one error type for bad input: a field (dotted path into the scenario) and what is wrong with it."""

from __future__ import annotations


class ScenarioError(Exception):
    """Bad user input. ``field`` is a dotted path such as ``flows[1].rtt`` or ``link.buffer``;
    ``str(err)`` is ``"field: message"``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[str, str]]:
        return (ScenarioError, (self.field, self.message))


class OutputError(ScenarioError):
    """Writing output failed for a reason outside the input (a full disk, an I/O error); ``field`` names
    the option that chose the output. The command line exits with 1 rather than 2 for it."""
