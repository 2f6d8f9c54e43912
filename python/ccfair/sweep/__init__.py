"""Parameter sweeps: a plan (TOML) expanded into runs, executed locally or on Dask, stored in a results
directory (:mod:`ccfair.store`).

A plan::

    name = "buffer-sizing"          # optional; default: the file name without .toml
    backend = "sim"                 # "sim" (default) or "kernel": real Linux TCP, one run at a time
    repetitions = 5                 # runs per cell (default 1)
    seed = 1                        # the plan seed every run's seed derives from (default 1)
    flip_start_order = true         # also run each cell with its flow groups' start order reversed
    scenario = "../scenarios/x.toml"  # the base scenario: a file (relative to the plan) or a [scenario] table

    [grid]                          # dotted scenario path = list of values; the cells are the product
    "link.rate" = ["10Mbps", "100Mbps"]
    "link.buffer" = ["0.5bdp", "1bdp", "2bdp"]

    [[zip]]                         # paths that vary together: one axis whose points pair the lists
    "flows[0].count" = [1, 2, 4]
    "flows[1].count" = [4, 2, 1]

    [[exclude]]                     # drop the cells matching every entry (a value or a list of values)
    "link.rate" = "100Mbps"
    "link.buffer" = ["2bdp"]

Paths are the scenario's keys separated by dots with list entries as ``[N]`` (``link.aqm``,
``flows[1].cc_params.beta``); a missing table on the way is created, a list entry must exist in the base
scenario. A seed in the base scenario is ignored: each run's seed derives from the plan seed, the cell's
coordinates and the repetition (:mod:`.identity`). ``flip_start_order`` is defined in :mod:`.expand`.

Every cell is resolved before anything runs; an invalid one stops the plan with an error naming the
scenario field and the cell (or, with ``skip_invalid``, is recorded as a failed run).

Modules: :mod:`.paths` (dotted paths), :mod:`.plan` (reading a plan), :mod:`.expand` (cells and runs),
:mod:`.identity` (run ids, seeds), :mod:`.task` (one run on a worker), :mod:`.execute_local` and
:mod:`.execute_dask` (executors), :mod:`.driver` (:func:`~.driver.run_sweep`), :mod:`.progress`,
:mod:`.bench` (``make bench-sweep``).
"""
