"""Run identity and seeds, both from SHA-256 over canonical JSON (never Python's ``hash()``, which changes
between processes), so they are the same on every run, machine and Python version.

- ``run_seed``: the first 8 bytes of SHA-256 over the plan seed, the cell's coordinates (path -> value) and
  the repetition, as an integer below 2^63 (fits a signed 64-bit column everywhere). A run and its mirrored
  (``flip_start_order``) run share their seed, so the pair differs only in the start order.
- ``run_id``: 32 hex characters of SHA-256 over the full resolved scenario (the user-level document with
  every default written out, and the native spec it resolves to), the seed and the ccfair version, and the
  backend when it is not the simulator: a kernel run is another run than the simulator's of the same
  scenario, while every simulator run keeps the id it had before backends entered the identity. A kernel
  run's identity also holds the emulator's settings that change what it measures (``emulator``: when a
  frame's time starts, :mod:`ccfair.emu.arrival`), so a store's runs of one setting are never resumed as
  runs of another.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

SEED_BITS = 63
RUN_ID_HEX_CHARS = 32
SIMULATOR = "sim"
BACKENDS = (SIMULATOR, "kernel")


def canonical_json(value: Any) -> str:
    """One text per value: sorted keys, no spaces, UTF-8 kept, NaN rejected (anything JSON lacks, such as a
    TOML date in an invalid scenario, as its text)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=str
    )


def _sha256(document: Any) -> bytes:
    return hashlib.sha256(canonical_json(document).encode()).digest()


def run_seed(plan_seed: int, coordinates: Mapping[str, Any], repetition: int) -> int:
    """The seed of repetition ``repetition`` of the cell at ``coordinates``."""
    digest = _sha256({"plan_seed": plan_seed, "coordinates": dict(coordinates), "repetition": repetition})
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def run_id(
    scenario: Mapping[str, Any],
    spec: Mapping[str, Any] | None,
    seed: int,
    version: str,
    backend: str = SIMULATOR,
    emulator: Mapping[str, Any] | None = None,
) -> str:
    """The identity of a run on ``backend`` (with ``emulator``'s settings, for the kernel). ``spec`` is None
    for a cell that does not resolve (recorded as invalid)."""
    document: dict[str, Any] = {"scenario": dict(scenario), "spec": spec, "seed": seed, "ccfair": version}
    if backend != SIMULATOR:
        document["backend"] = backend
    if emulator is not None:
        document["emulator"] = dict(emulator)
    return _sha256(document).hex()[:RUN_ID_HEX_CHARS]
