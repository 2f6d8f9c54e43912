"""The result store: a results directory holding a DuckDB catalog and Parquet time series, written by
``ccfair sweep`` (:mod:`ccfair.sweep`) and read by :func:`load`, ``ccfair query`` and ``ccfair export``.

Reading::

    results = ccfair.load("results/")
    results.runs                  # DataFrame, one row per run (done or failed), read on first use
    results.flows, results.classes, results.cells
    results.timeseries(run_id)    # one run's per-flow time series (a unique prefix of the id is enough)
    results.queue(run_id), results.result(run_id)   # its queue; the RunResult ccfair.run returned for it
    results.query("select link_buffer, avg(jain_index) from runs group by 1")
    results.to_xarray("jain_index")  # a plan's grid as an xarray DataArray (xarray is optional)

``flows`` and ``classes`` as loaded carry each run's ``plan``, ``cell``, ``repetition``, ``flipped`` and
the plan's axis columns, and axes written with units get numeric companions (``link_buffer_bdp``) in all
three tables (:mod:`.coordinates`). The catalog's ``runs`` holds the companions too; its ``flows`` and
``classes`` hold neither the place nor the axes, which ``ccfair export`` adds to their files.

Every read opens the catalog read-only and closes it again. DuckDB admits no other process while one writes,
so a sweep publishes a snapshot of the catalog every few seconds (:mod:`.layout`): during a sweep, reads
open it and see the runs committed up to then, and ``ccfair status`` adds the sweep's progress from
``status.json``. A run is visible in ``flows``, ``classes`` and the time series only once its ``runs``
row says ``done``; a failed run has a ``runs`` row only.

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
  tables as JSON); beside a column of unit strings its numeric companion in base units (``link_buffer_bdp``
  DOUBLE, ``flows0_rtt_ns``, ``_bps``, ``_bytes``, ``_packets`` BIGINT; :mod:`.coordinates`), null for the
  runs of a plan that does not vary it
- the resolved scenario without units: ``duration_ns``, ``link_rate_bps``, ``buffer_packets`` or
  ``buffer_bytes`` (the queue limit; the other one is null), ``aqm``, ``mtu_bytes``, ``flow_count``
- one DOUBLE column per run-summary value (the keys of :data:`ccfair.analysis.schema.SUMMARY`, e.g.
  ``jain_index``, ``utilization``, ``total_goodput_bps``, ``queue_sojourn_p99_ns``, ``fness`` (two-flow
  runs), and the numeric values a newer ccfair adds); null when failed, undefined, or not a number
  (``window_short``). ``summary_json``: the summary as JSON
- ``scenario_json``: the scenario with every default written out and the seed (``Scenario.from_dict``
  reads it)
- provenance: ``ccfair_version``, ``git_revision`` (commit of the sources, ``+dirty.`` and 8 hex digits of
  SHA-256 over the diff with local changes; null outside a git checkout), ``native_build`` (16 hex digits of
  SHA-256 over the native extension file that ran it: a rebuilt simulator core shows), ``backend``
  (``sim`` or ``kernel``), ``executor`` (``local``, ``dask ADDRESS``, or ``plan`` for an invalid cell
  recorded without running), ``host``, ``worker`` (``pid N``), ``started_at``, ``task_wall_seconds`` (the
  whole run on the worker), ``encode_seconds`` (encoding its tables for the store), ``committed_at``
- the series files as committed (null when failed, and for runs committed by catalog schema 1):
  ``timeseries_bytes``, ``timeseries_sha256``, ``queue_bytes``, ``queue_sha256`` (SHA-256 in hex)

``flows``: ``run_id`` and the columns of ``RunResult.flows``, one row per flow of each done run.
``classes``: ``run_id`` and the columns of ``RunResult.classes``, one row per connection class.
``cells``: every run of every plan registered here, run or not: ``plan``, ``run_index`` (position in the
plan's run order), ``cell``, ``repetition``, ``flipped``, ``run_id``.
``plans``: ``plan`` (name), ``source`` (the plan file), ``definition`` (JSON: ``name``, ``backend`` (``sim``
or ``kernel``; absent in catalogs written before it, meaning ``sim``), ``scenario`` (its base),
``repetitions``, ``seed``, ``flip_start_order``, ``axes`` as ``[{"paths": [...], "points": [[...]]}]``,
``exclude``, and for a study's plan ``study``: what its report needs, e.g. advise's constraints), ``cells``,
``runs``, ``registered_at``.
``timeseries``, ``queue`` (views in queries; one Parquet file per done run): ``run_id`` and the columns of
``RunResult.timeseries`` and ``RunResult.queue``.
``meta``: ``key``, ``value``; ``schema_version`` is :data:`.schema.SCHEMA_VERSION` (1: before the file
columns, 2: before ``native_build``, 3: before the summary columns declared as added later; a sweep adds the
missing columns to an older catalog, readers accept every version, a newer version asks for a newer ccfair).

Modules: :mod:`.layout` (files of a results directory, opening the catalog, sharing it with a running sweep),
:mod:`.schema` (tables and column types), :mod:`.coordinates` (plan coordinates for analysis), :mod:`.grid`
(``to_xarray``), :mod:`.check` (the catalog's shape and the JSON stored in it), :mod:`.integrity` (damage to
the series files), :mod:`.writer` (the single writer and its atomic commit), :mod:`.reader` (:func:`load`,
:func:`query`), :mod:`.status`, :mod:`.export`.
"""

from ccfair.store.reader import Results, load, query

__all__ = ["Results", "load", "query"]
