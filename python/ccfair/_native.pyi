"""Types of ``ccfair._native``, the extension built from ``crates/ccfair-py/src/lib.rs``.

Every name the module exports has a line here (tests/test_native_stub.py compares the two), so a new export
without its type fails the tests.
"""

from collections.abc import Callable
from typing import TypeAlias

__version__: str
"""The version of the crate the module was built from (``ccfair-py``'s ``Cargo.toml``)."""

_NumericColumn: TypeAlias = tuple[str, bytes]
"""A numeric column: its NumPy dtype string (``"<u8"``, ``"<f8"``, ...) and its little-endian bytes."""

_Column: TypeAlias = _NumericColumn | list[str]
"""A column as ``run`` returns it: numeric, or a list of str for text columns."""

_Table: TypeAlias = dict[str, _Column]
"""A table as ``run`` returns it: its columns by name, in the output schema's order."""

class ScenarioError(ValueError):
    """A scenario the simulator cannot run: ``field`` names the value (``flows[1].cc_params.beta``),
    ``message`` says what is allowed. ``args`` is ``(field, message)``."""

    field: str
    message: str

def resolve(input_json: str) -> str:
    """Resolves a scenario in base units (JSON): returns ``{"spec": ..., "estimate": ...}`` as JSON, or raises
    :class:`ScenarioError`."""

def flow_plans(spec_json: str, seed: int) -> str:
    """Every flow's start time and size under ``seed`` for a resolved spec (JSON), as the simulator draws
    them: a JSON list of ``{"start_ns", "size_bytes"}``."""

def memory_probe(working_set_bytes: int, accesses: int, seed: int) -> dict[str, int | float]:
    """What one cache line costs on this machine over a working set of ``working_set_bytes`` (whole 64-byte
    lines, at least 64 of them): ``working_set_bytes``, ``accesses``, and nanoseconds per line accessed in
    random order for ``dependent_ns`` (each address read from the line before), ``overlapped_ns``
    (independent read-modify-writes) and ``prefetched_ns`` (the same, each line asked for well ahead of
    its access). Allocates the working set; runs without the GIL."""

def run(
    spec_json: str, seed: int, progress: Callable[[float], object] | None = None
) -> dict[str, _Table | dict[str, int | float]]:
    """Runs a resolved spec (the ``spec`` of :func:`resolve`, as JSON) with ``seed``. Returns the tables
    ``flows``, ``timeseries`` and ``queue`` (columns by name) and ``totals`` (scalars by name). Calls
    ``progress(fraction of simulated time)`` between chunks of about 20 ms of wall time; raises
    ``KeyboardInterrupt`` on Ctrl-C and :class:`ScenarioError` for a spec it cannot run."""

def catalog() -> str:
    """The congestion controls, queue disciplines, limits and output schema, as JSON."""
