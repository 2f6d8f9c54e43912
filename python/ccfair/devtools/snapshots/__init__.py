"""Golden snapshots: the exact outcomes of short canonical runs, stored as text tables in the repository.

The cases (``tests/snapshots/cases.toml``) are user-level scenarios with their seeds, so they survive any
redesign of the code behind them. Each case's snapshot (``tests/snapshots/expected/<case>.txt``) holds, from
the native output, its per-flow counters and other flow columns, a per-flow digest of its interval rows, the
run's values, and a SHA-256 per column of the two time series (floats by their bits); then, in sections
named ``derived_*``, the flow table's computed columns, the classes and the summary.
``tests/test_snapshots.py`` compares them exactly; ``make snapshots`` regenerates them and says what moved.

- :mod:`.cases`: reading the cases file
- :mod:`.take`: running a case into a snapshot
- :mod:`.table`: the text format, its parser and the cell-level diff
- :mod:`.requires`: each case's preconditions (an RTO case must have RTOs)
- :mod:`.check`: comparing with and writing the stored snapshots
"""

from __future__ import annotations

from ccfair.devtools.snapshots.cases import Case, load_cases
from ccfair.devtools.snapshots.check import Outcome, check_case, stale_files, store

__all__ = ["Case", "Outcome", "check_case", "load_cases", "stale_files", "store"]
