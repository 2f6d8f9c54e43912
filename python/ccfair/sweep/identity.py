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
from collections.abc import Callable, Mapping
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
    return _sha256(_identity(scenario, spec, seed, version, backend, emulator)).hex()[:RUN_ID_HEX_CHARS]


def _identity(
    scenario: Mapping[str, Any],
    spec: Mapping[str, Any] | None,
    seed: int | str,
    version: str,
    backend: str,
    emulator: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The document a run id hashes."""
    document: dict[str, Any] = {"scenario": dict(scenario), "spec": spec, "seed": seed, "ccfair": version}
    if backend != SIMULATOR:
        document["backend"] = backend
    if emulator is not None:
        document["emulator"] = dict(emulator)
    return document


# Expanding a plan computes one seed per (cell, repetition) and one id per run: the factories below encode a
# cell's or a scenario's canonical JSON once and then only the seed or the repetition per run, with digests
# equal to run_seed's and run_id's (tests check them against each other).


def seeds_of_cell(plan_seed: int, coordinates: Mapping[str, Any]) -> Callable[[int], int]:
    """``repetition -> run_seed(plan_seed, coordinates, repetition)``, the cell's JSON hashed once: its
    canonical form ends with the repetition (its keys sorted: coordinates, plan_seed, repetition)."""
    head = canonical_json({"plan_seed": plan_seed, "coordinates": dict(coordinates), "repetition": 0})
    assert head.endswith('"repetition":0}')
    prefix = hashlib.sha256(head[: -len("0}")].encode())

    def seed(repetition: int) -> int:
        h = prefix.copy()
        h.update(f"{int(repetition)}}}".encode())
        return int.from_bytes(h.digest()[:8], "big") >> (64 - SEED_BITS)

    return seed


# Stands for the seed while a run's document is encoded once: a string no scenario holds (its NUL characters
# are written as \u0000 escapes), so its quoted JSON form marks exactly where the seed's digits go.
_SEED_MARK = "\x00ccfair seed\x00"


def ids_of_scenario(
    scenario: Mapping[str, Any],
    spec: Mapping[str, Any] | None,
    version: str,
    backend: str = SIMULATOR,
    emulator: Mapping[str, Any] | None = None,
) -> Callable[[int], str]:
    """``seed -> run_id(scenario, spec, seed, version, backend, emulator)``, the document encoded once. A
    scenario that happens to hold the marker itself gets each id computed in full."""
    template = canonical_json(_identity(scenario, spec, _SEED_MARK, version, backend, emulator))
    mark = canonical_json(_SEED_MARK)
    if template.count(mark) != 1:  # the run's seed: a second one is the scenario's own text
        return lambda seed: run_id(scenario, spec, seed, version, backend, emulator)

    head, tail = template.split(mark)
    before = hashlib.sha256(head.encode())
    after = tail.encode()

    def identity(seed: int) -> str:
        h = before.copy()
        h.update(str(int(seed)).encode())
        h.update(after)
        return h.hexdigest()[:RUN_ID_HEX_CHARS]

    return identity
