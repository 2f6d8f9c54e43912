"""A plan's runs as a labelled grid: :meth:`ccfair.store.Results.to_xarray`.

One dimension per plan axis (a ``[[zip]]`` group is one dimension, named by its first path's column, its
other paths coordinates along it), then ``repetition``, then ``flipped`` when the plan mirrors start
orders. Dimension values are the plan's values as the ``runs`` table stores them (``"0.5bdp"``), in plan
order; numeric companions (``link_buffer_bdp``) ride along as coordinates. A run that is not done, and a
cell the plan excluded, is NaN. xarray is optional: it is imported here, on use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ccfair.errors import InputError
from ccfair.store.coordinates import companion
from ccfair.sweep.identity import canonical_json
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from ccfair.store.reader import Results

INSTALL_HINT = "pip install xarray (or pip install 'ccfair[notebook]')"


def _xarray() -> Any:
    try:
        import xarray  # an optional extra (ccfair[notebook])
    except ImportError:
        raise ImportError(f"Results.to_xarray needs xarray, which is not installed: {INSTALL_HINT}") from None
    return xarray


def _stored(values: list[Any], column: pd.Series | None) -> list[Any]:
    """Plan values as a ``runs`` column holds them (a text column holds non-text values as JSON)."""
    if all(isinstance(v, str) for v in values) or column is None:
        return values
    if pd.api.types.is_string_dtype(column) and column.notna().any():
        return [v if isinstance(v, str) else canonical_json(v) for v in values]
    return values


def metric_grid(results: Results, metric: str, plan: str | None) -> Any:
    """See the module docstring."""
    xr = _xarray()
    plans = results.plans
    if not plans:
        raise InputError(str(results.directory), "the results directory holds no plan yet")
    if plan is None:
        if len(plans) > 1:
            raise InputError(
                "plan", f"the results directory holds several plans; name one of: {', '.join(plans)}"
            )
        plan = next(iter(plans))
    if plan not in plans:
        raise InputError("plan", f"no plan {plan!r}; plans: {', '.join(plans)}")
    definition = plans[plan]
    runs = results.runs
    numeric = [
        c
        for c in runs.columns
        if pd.api.types.is_numeric_dtype(runs[c]) and not pd.api.types.is_bool_dtype(runs[c])
    ]
    if metric not in numeric:
        raise InputError("metric", f"no metric {metric!r} in runs; numeric columns: {', '.join(numeric)}")
    cells = results.cells
    own = cells[cells["plan"] == plan][["run_id", "repetition", "flipped"]]
    frame = own.merge(runs.drop(columns=["repetition", "flipped"], errors="ignore"), on="run_id", how="left")
    dims: list[str] = []
    coords: dict[str, Any] = {}
    index_of: list[dict[Any, int]] = []
    for axis in definition.get("axes", []):
        paths = axis["paths"]
        first = column_name(paths[0])
        dims.append(first)
        for k, path in enumerate(paths):
            col = column_name(path)
            values = _stored([point[k] for point in axis["points"]], runs.get(col))
            coords[col] = (first, values)
            found = companion(col, pd.Series(values, dtype=object))
            if found is not None:
                coords[found[0]] = (first, found[1].to_numpy())
            if k == 0:
                index_of.append({v: i for i, v in enumerate(values)})
    repetitions = int(definition.get("repetitions") or (frame["repetition"].max() + 1 if len(frame) else 1))
    dims.append("repetition")
    coords["repetition"] = np.arange(repetitions)
    flips = bool(definition.get("flip_start_order"))
    if flips:
        dims.append("flipped")
        coords["flipped"] = [False, True]
    shape = [len(m) for m in index_of] + [repetitions] + ([2] if flips else [])
    data = np.full(shape, np.nan)
    done = frame[frame["status"] == "done"]
    for row in done.to_dict("records"):
        position = []
        for d, mapping in zip(dims, index_of, strict=False):
            value = row.get(d)
            if value not in mapping:
                break
            position.append(mapping[value])
        else:
            position.append(int(row["repetition"]))
            if flips:
                position.append(int(bool(row["flipped"])))
            value = row.get(metric)
            data[tuple(position)] = np.nan if value is None else float(value)
    return xr.DataArray(data, dims=dims, coords=coords, name=metric, attrs={"plan": plan})
