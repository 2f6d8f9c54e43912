"""``ccfair validate``: the simulator checked against real Linux TCP, the standing fidelity oracle.

- :mod:`.grid`: the cells (a designed list of small scenarios), their plans per side (the kernel, the
  simulator with each host preset);
- :mod:`.run`: running a side's plans into a results directory, topping up kernel cells whose runs the
  testbed's health flagged;
- :mod:`.metrics`: the metrics compared, per run, from the store;
- :mod:`.truth`: the kernel ground truth with its provenance, committed as ``truth.json`` beside this file;
- :mod:`.compare`: means, spreads, gaps and the targets; :mod:`.report`: tables, ``validate.md``;
- :mod:`.study`: the whole command; :mod:`.estimate`: the grid's size for ``--list``.
"""
