"""Types of ``ccfair._native``, the extension built from ``crates/ccfair-py/src/lib.rs``.

Every name the module exports has a line here (tests/test_native_stub.py compares the two), so a new export
without its type fails the tests.
"""

from collections.abc import Callable
from typing import Any, TypeAlias

__version__: str
"""The version of the crate the module was built from (``ccfair-py``'s ``Cargo.toml``)."""

_NumericColumn: TypeAlias = tuple[str, bytes]
"""A numeric column: its NumPy dtype string (``"<u8"``, ``"<f8"``, ...) and its little-endian bytes."""

_Column: TypeAlias = _NumericColumn | list[str]
"""A column as ``run`` returns it: numeric, or a list of str for text columns."""

_Table: TypeAlias = dict[str, _Column]
"""A table as ``run`` returns it: its columns by name, in the output schema's order."""

class InputError(ValueError):
    """A scenario the simulator cannot run: ``field`` names the value (``flows[1].cc_params.beta``),
    ``message`` says what is allowed. ``args`` is ``(field, message)``."""

    field: str
    message: str

ScenarioError = InputError

def resolve(scenario: object, backend_json: str | None = None) -> str:
    """Resolves a scenario for a backend: ``scenario`` is its document (a dict, as TOML reads it) or the
    scenario in base units (the JSON text of ``ScenarioInput``); ``backend_json`` is ``{"name": "sim"}`` (the
    default) or ``{"name": "kernel", "available_ccs": [...]}``. Returns JSON with ``input`` (base units),
    ``seed``, ``base_rtt_ns``, ``document``, ``explicit``, ``spec``, ``estimate`` (and ``sim_spec`` for the
    kernel backend), or raises :class:`InputError`."""

def parse_quantity(kind: str, value: object, field: str, allow_zero: bool = False) -> object:
    """A quantity with its unit in base units: ``kind`` ``rate``, ``size``, ``duration``, ``packets`` (an
    int), ``bdp`` (a float), ``buffer`` (``(kind, value)``) or ``seed``; raises :class:`InputError` on
    ``field``."""

def format_quantity(kind: str, value: int | float) -> str:
    """A quantity in base units as scenarios write it: ``kind`` ``rate``, ``size``, ``duration``, or a buffer
    kind (``packets``, ``bytes``, ``bdp``, ``time``)."""

def defaults() -> dict[str, Any]:
    """The scenario document's defaults, the header bytes of a segment and the document's nesting limit."""

def check_depth(value: object, field: str) -> None:
    """Raises :class:`InputError` on ``field`` if ``value`` nests tables and arrays too deeply."""

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
    ``KeyboardInterrupt`` on Ctrl-C and :class:`InputError` for a spec it cannot run."""

def catalog() -> str:
    """The congestion controls, queue disciplines, limits and output schema, as JSON."""
