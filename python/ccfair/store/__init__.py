"""The result store: a results directory holding a DuckDB catalog and Parquet time series, written by
``ccfair sweep`` (:mod:`ccfair.sweep`) and read by :func:`load`, ``ccfair query`` and ``ccfair export``.

Reading::

    results = ccfair.load("results/")
    results.runs                  # DataFrame, one row per run (done or failed), read on first use
    results.flows, results.classes, results.cells
    results.timeseries(run_id)    # one run's per-flow time series; results.queue(run_id) its queue
    results.result(run_id)        # the RunResult that ccfair.run returned for that run
    results.query("select link_buffer, avg(jain_index) from runs group by 1")

Every read opens the catalog read-only and closes it again. While a sweep writes to the directory DuckDB
admits no other process: reads fail with a message saying so, and ``ccfair status`` reports the sweep's
progress from ``status.json``. A run is visible in ``flows``, ``classes`` and the time series only once its
``runs`` row says ``done``; a failed run has a ``runs`` row only.

A results directory is untrusted input (they are exchanged): reading one reads no other file, reaches no
network and runs no code from it. The catalog is opened with DuckDB's external access off and its
configuration locked (:data:`.layout.SAFE_CONFIG`), so no SQL, a query's or a crafted view's, reads or
writes a file or loads an extension; its shape is checked before use (:mod:`.check`: exactly the tables
below, no views, macros or other objects); the time series reach DuckDB as Arrow datasets over the done
runs' files; run ids are checked (32 hex characters) wherever they become paths; series files are opened
without following symbolic links. Damage is found against the size and SHA-256 recorded per file
(:mod:`.integrity`): reads check presence and size (``Results.timeseries`` also the checksum), ``ccfair
status --verify`` everything, and a resumed sweep marks damaged runs failed (``error_kind`` ``damaged``)
and runs them again.

Units are in column names: ``_ns`` nanoseconds, ``_bps`` bits per second, ``_bytes``, ``_ms`` milliseconds,
``_seconds`` wall-clock seconds. Timestamps are UTC.

``runs`` (one row per run, the latest attempt):

- ``run_id`` VARCHAR: 32 hex characters of SHA-256 over the resolved scenario, the seed and the ccfair
  version (:mod:`ccfair.sweep.identity`)
- ``status``: ``done`` or ``failed``; ``error_kind`` (null when done): ``invalid`` (the scenario does not
  validate), ``exception`` (an error during the run), ``panic`` (a panic in the native core), ``timeout``
  (past the per-run wall-time limit), ``crash`` (the worker process died or Dask lost the task),
  ``damaged`` (a done run whose files a resumed sweep found missing or changed; its metrics and its
  ``flows`` and ``classes`` rows are removed and the next sweep of its plan runs it again); ``error``: the
  message
- ``plan`` (name of the plan that ran it), ``cell`` (index of the cell in that plan), ``repetition`` (from 0),
  ``flipped`` (the mirrored run of ``flip_start_order``), ``seed`` BIGINT (below 2^63)
- one column per varied plan path, named by :func:`ccfair.sweep.paths.column_name` (``link.rate`` ->
  ``link_rate``, ``flows[0].count`` -> ``flows0_count``) and holding the plan's value: BIGINT, DOUBLE or
  BOOLEAN when all the values are integers, numbers or booleans, else VARCHAR (unit strings as written,
  tables as JSON)
- the resolved scenario without units: ``duration_ns``, ``link_rate_bps``, ``buffer_packets`` or
  ``buffer_bytes`` (the queue limit; the other one is null), ``aqm``, ``mtu_bytes``, ``flow_count``
- one DOUBLE column per run-summary metric (:mod:`ccfair.analysis.metrics`: ``jain_index``, ``utilization``,
  ``total_goodput_bps``, ``queue_sojourn_p50_ns``, ``queue_sojourn_p99_ns``, ``drops``,
  ``retransmissions``, ``fness`` (two-flow runs), ``events``, ``wall_seconds`` (the simulation's wall time),
  and the metrics newer versions add); null when failed or undefined. ``summary_json``: the summary as JSON
- ``scenario_json``: the scenario with every default written out and the seed (``Scenario.from_dict``
  reads it)
- provenance: ``ccfair_version``, ``git_revision`` (commit of the sources, ``+dirty`` with local changes;
  null outside a git checkout), ``backend`` (``sim``), ``executor`` (``local``, ``dask ADDRESS``, or ``plan``
  for an invalid cell recorded without running), ``host``, ``worker`` (``pid N``), ``started_at``,
  ``task_wall_seconds`` (the whole run on the worker), ``encode_seconds`` (encoding its tables for the
  store), ``committed_at``
- the series files as committed (null when failed, and for runs committed by catalog schema 1):
  ``timeseries_bytes``, ``timeseries_sha256``, ``queue_bytes``, ``queue_sha256`` (SHA-256 in hex)

``flows``: ``run_id`` and the columns of ``RunResult.flows``, one row per flow of each done run.
``classes``: ``run_id`` and the columns of ``RunResult.classes``, one row per connection class.
``cells``: every run of every plan registered here, run or not: ``plan``, ``run_index`` (position in the
plan's run order), ``cell``, ``repetition``, ``flipped``, ``run_id``.
``plans``: ``plan`` (name), ``source`` (the plan file), ``definition`` (JSON: ``name``, ``scenario`` (its
base), ``repetitions``, ``seed``, ``flip_start_order``, ``axes`` as ``[{"paths": [...], "points": [[...]]}]``,
``exclude``), ``cells``, ``runs``, ``registered_at``.
``timeseries``, ``queue`` (views in queries; one Parquet file per done run): ``run_id`` and the columns of
``RunResult.timeseries`` and ``RunResult.queue``.
``meta``: ``key``, ``value``; ``schema_version`` is 2 (1: before the file columns; a sweep adds them to a
version-1 catalog, readers accept both, a newer version asks for a newer ccfair).

Modules: :mod:`.layout` (files of a results directory, opening the catalog), :mod:`.schema` (tables and
column types), :mod:`.check` (the catalog's shape and the JSON stored in it), :mod:`.integrity` (damage to
the series files), :mod:`.writer` (the single writer and its atomic commit), :mod:`.reader` (:func:`load`,
:func:`query`), :mod:`.status`, :mod:`.export`.
"""

from ccfair.store.reader import Results, load, query

__all__ = ["Results", "load", "query"]
