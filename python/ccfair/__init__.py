"""ccfair: a congestion-control fairness lab.

A deterministic packet-level simulator of TCP flows sharing a bottleneck, with scenarios in TOML::

    import ccfair
    result = ccfair.run("scenarios/default.toml", seed=1)
    result.flows, result.classes, result.timeseries, result.queue  # pandas DataFrames
    result.summary                                                  # dict

    results = ccfair.load("results/")     # a results directory written by `ccfair sweep`
    results.runs, results.flows, results.classes, results.timeseries(run_id)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccfair import _native
from ccfair.errors import InputError, ScenarioError
from ccfair.scenario import Scenario

if TYPE_CHECKING:
    from ccfair.result import RunResult, load_run
    from ccfair.runner import run
    from ccfair.store import Results, load

__version__: str = _native.__version__

__all__ = [
    "InputError",
    "Results",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load",
    "load_run",
    "run",
]


def __getattr__(name: str) -> Any:
    # The runner and results load NumPy (and pandas, for their DataFrames): only when used.
    if name == "run":
        from ccfair.runner import run

        return run
    if name in ("RunResult", "load_run"):
        from ccfair import result

        return getattr(result, name)
    if name in ("Results", "load"):
        # DuckDB and the store load only for results directories.
        from ccfair import store

        return getattr(store, name)
    raise AttributeError(f"module 'ccfair' has no attribute {name!r}")
