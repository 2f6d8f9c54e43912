"""The result of one run: DataFrames, the summary, the scenario and seed; saving and loading them."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair import fsio
from ccfair.analysis import schema
from ccfair.analysis.dynamic import dynamic_summary, has_dynamic_traffic
from ccfair.analysis.metrics import (
    Columns,
    class_columns,
    flow_columns,
    frame,
    json_number,
    native_columns,
    run_summary,
)
from ccfair.errors import InputError
from ccfair.json_text import parse_json
from ccfair.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

# pandas is heavy (about a quarter second to import): a result from the simulator keeps its tables as NumPy
# columns and makes DataFrames only when asked, so `ccfair run --json` never imports it.

SCENARIO_FILE = "scenario.toml"
SUMMARY_FILE = "summary.json"
TABLE_FILES = {
    "flows": "flows.parquet",
    "classes": "classes.parquet",
    "timeseries": "timeseries.parquet",
    "queue": "queue.parquet",
}
RUN_FILES = frozenset((SCENARIO_FILE, SUMMARY_FILE, *TABLE_FILES.values()))


def _is_unmarked_run(directory: Path, entries: Sequence[str]) -> bool:
    """A run saved before ccfair marked its directories: exactly the files :meth:`RunResult.save` writes."""
    return set(entries) == RUN_FILES


RUN_KIND = fsio.Kind("run", "a saved run", legacy=_is_unmarked_run)


def _json_value(x: Any) -> Any:
    if isinstance(x, str | bool):
        return x
    return json_number(x)


def _records(table: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows of ``table`` (a DataFrame or columns) with ``keys``, as plain JSON values."""
    columns = {k: table[k].tolist() if hasattr(table[k], "tolist") else list(table[k]) for k in keys}
    rows = len(columns[keys[0]])
    return [{k: _json_value(columns[k][i]) for k in keys} for i in range(rows)]


class _Table:
    """A run's table by its attribute's name, made a DataFrame when first read (a read-only attribute)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, run: RunResult, owner: type | None = None) -> pd.DataFrame:
        return run._frame(self.name)

    def __set__(self, run: RunResult, value: object) -> None:
        raise AttributeError(f"RunResult.{self.name} is read-only")


class RunResult:
    """One run.

    - ``flows``: one row per flow, ``classes``: one row per (cc, rtt_ns) class of active flows (definitions
      in :mod:`ccfair.analysis.metrics`)
    - ``timeseries``: one row per active flow per interval (``t_ns`` = interval end), native columns
    - ``queue``: one row per interval for the bottleneck queue, native columns
    - ``summary``: run-level metrics, plain JSON types
    - ``dynamic``: fairness among the flows active at each moment and completion times
      (:mod:`ccfair.analysis.dynamic`), for a scenario with finite flows or arrivals; None otherwise
    - ``scenario``: the scenario run, with ``seed`` set to the seed used
    - ``name``: what the run is, for titles (its scenario file, saved directory, or plan and cell), if known

    In Jupyter a result shows as HTML: the summary and its flows and classes tables.
    """

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        summary: dict[str, Any],
        flows: pd.DataFrame | Columns,
        classes: pd.DataFrame | Columns,
        timeseries: pd.DataFrame | Columns,
        queue: pd.DataFrame | Columns,
        name: str | None = None,
    ) -> None:
        """Tables are DataFrames or columns (:data:`ccfair.analysis.metrics.Columns`, made into DataFrames
        on first use)."""
        self.scenario = scenario
        self.seed = seed
        self.summary = summary
        self.name = name
        self._tables: dict[str, pd.DataFrame | Columns] = {
            "flows": flows,
            "classes": classes,
            "timeseries": timeseries,
            "queue": queue,
        }

    def _repr_html_(self) -> str:
        from ccfair.notebook import run_html  # for Jupyter only: not loaded by a run

        return run_html(self)

    def _frame(self, name: str) -> pd.DataFrame:
        table = self._tables[name]
        if isinstance(table, dict):
            table = frame(table, list(schema.CLASS_NAMES) if name == "classes" else None)
            self._tables[name] = table
        return table

    flows = _Table()
    classes = _Table()
    timeseries = _Table()
    queue = _Table()

    @property
    def dynamic(self) -> dict[str, Any] | None:
        if not has_dynamic_traffic(self.scenario):
            return None
        if "dynamic" not in self.__dict__:
            self.__dict__["dynamic"] = dynamic_summary(
                self._tables["flows"], self._tables["timeseries"], self.scenario
            )
        summary: dict[str, Any] = self.__dict__["dynamic"]
        return summary

    @classmethod
    def from_native(cls, output: Mapping[str, Any], scenario: Scenario, seed: int) -> RunResult:
        """Builds the tables from ``_native.run``'s output for ``scenario`` run with ``seed``."""
        flows = flow_columns(output["flows"], scenario)
        return cls(
            scenario=scenario.with_seed(seed),
            seed=seed,
            summary=run_summary(flows, output["totals"], scenario),
            flows=flows,
            classes=class_columns(flows, scenario.link.rate_bps),
            timeseries=native_columns(output["timeseries"]),
            queue=native_columns(output["queue"]),
        )

    def to_json_dict(self) -> dict[str, Any]:
        """The machine-readable document: ``summary``, ``flows``, ``classes``, ``dynamic`` (only for a
        scenario with finite flows or arrivals), ``scenario`` (all defaults written out, ``seed`` included).
        Plain JSON types, None for undefined values."""
        scenario = self.scenario.with_seed(self.seed).to_dict(explicit=True)
        document: dict[str, Any] = {
            "summary": {k: _json_value(v) for k, v in self.summary.items()},
            "flows": _records(self._tables["flows"], schema.json_keys(schema.flows())),
            "classes": _records(self._tables["classes"], schema.json_keys(schema.CLASSES)),
        }
        dynamic = self.dynamic
        if dynamic is not None:
            document["dynamic"] = dynamic
        document["scenario"] = scenario
        return document

    def save(self, directory: str | Path, *, option: str = "directory") -> Path:
        """Writes ``scenario.toml``, ``summary.json``, the tables as Parquet and ccfair's marker file into
        ``directory``; returns it, resolved.

        Atomic, and never over someone else's data (:mod:`ccfair.fsio`): everything goes into a temporary
        sibling directory, is fsynced, and is renamed into place. An existing ``directory`` is replaced only
        if it is empty or a saved run (its marker, or the six files of a run saved before markers), and only
        once the new one is complete; anything else is refused with an InputError on ``option``."""
        return fsio.write_dir(directory, RUN_KIND, self._write_files, option)

    def _write_files(self, directory: Path) -> None:
        toml = "# The scenario of this run, every default written out.\n" + self.scenario.with_seed(
            self.seed
        ).to_toml(explicit=True)
        fsio.write_synced(directory / SCENARIO_FILE, toml.encode())
        document = json.dumps(self.to_json_dict(), indent=2, allow_nan=False) + "\n"
        fsio.write_synced(directory / SUMMARY_FILE, document.encode())
        for name, file_name in TABLE_FILES.items():
            frame: pd.DataFrame = getattr(self, name)
            with open(directory / file_name, "wb") as f:
                frame.to_parquet(f, index=False)
                f.flush()
                os.fsync(f.fileno())

    @classmethod
    def load(cls, directory: str | Path) -> RunResult:
        """Reads a directory written by :meth:`save`."""
        import pandas as pd  # a run's JSON document needs only NumPy

        d = Path(directory)
        if not d.is_dir():
            raise InputError(str(d), "no such run directory")
        scenario = Scenario.from_toml(d / SCENARIO_FILE)
        document = parse_json((d / SUMMARY_FILE).read_text(), str(d / SUMMARY_FILE))
        frames = {name: pd.read_parquet(d / file_name) for name, file_name in TABLE_FILES.items()}
        seed = int(document["scenario"]["seed"])
        return cls(
            scenario=scenario.with_seed(seed),
            seed=seed,
            summary=document["summary"],
            **frames,
            name=d.resolve().name,
        )


def load_run(directory: str | Path) -> RunResult:
    """A run saved with :meth:`RunResult.save`."""
    return RunResult.load(directory)
