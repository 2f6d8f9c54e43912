"""Analysis of runs: fairness metrics (:mod:`.fairness`) and the per-run tables (:mod:`.metrics`)."""

from ccfair.analysis.fairness import fness, harm, jain_index, relative_goodput

__all__ = ["fness", "harm", "jain_index", "relative_goodput"]
