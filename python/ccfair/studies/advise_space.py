"""What ``ccfair advise`` searches: the queue-discipline variants and buffer sizes.

Apart from :mod:`ccfair.studies.advise` (the search and its analysis) because the command's help text quotes
them, and building the parser should not load the sweep layer.
"""

from __future__ import annotations

from typing import Any

# Each discipline's variants: its main parameter at the RFC/kernel default and at one alternative.
SPACE: dict[str, tuple[dict[str, Any], ...]] = {
    "fifo": ({},),
    "red": ({},),
    "codel": ({"target_ns": "5ms"}, {"target_ns": "15ms"}),
    "pie": ({"target_ns": "15ms"}, {"target_ns": "5ms"}),
    "fq_codel": ({"target_ns": "5ms"}, {"target_ns": "15ms"}),
}
DEFAULT_AQMS = ("fifo", "red", "codel", "pie", "fq_codel")
DEFAULT_BUFFERS = ("0.5bdp", "1bdp", "2bdp", "4bdp", "8bdp")
