"""The example scenarios, plans and starting files that ship inside the package.

- :data:`SCENARIOS`: the scenarios the documentation uses (``scenarios/`` of a source checkout is this
  directory)
- :data:`PLANS`: the example plans (``plans/`` likewise)
- :data:`STARTER`: the annotated ``scenario.toml`` and ``plan.toml`` that ``ccfair init`` writes
"""

from __future__ import annotations

from pathlib import Path

DIR = Path(__file__).resolve().parent
SCENARIOS = DIR / "scenarios"
PLANS = DIR / "plans"
STARTER = DIR / "init"
STARTER_FILES = ("scenario.toml", "plan.toml")


def starter_files() -> dict[str, bytes]:
    """The files ``ccfair init`` writes, by name."""
    return {name: (STARTER / name).read_bytes() for name in STARTER_FILES}
