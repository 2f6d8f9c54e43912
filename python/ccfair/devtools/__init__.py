"""Tools for developing ccfair itself, run from a checkout (nothing in a simulation imports them).

- :mod:`ccfair.devtools.snapshots`: golden snapshot tables of short canonical runs (``make snapshots``).
- :mod:`ccfair.devtools.wheel_check`: a built wheel installed into a fresh virtualenv and its smoke commands
  run (``make wheel-check``).
"""
