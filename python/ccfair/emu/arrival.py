"""When a frame's time at the emulated bottleneck starts, chosen with ``CCFAIR_EMU_ARRIVAL``.

- ``stamp`` (the default): at the kernel's arrival stamp, taken as the veth hands the frame on, as a switch
  of silicon starts it. The emulator first runs its link and delay lines to that instant.
- ``read``: when the emulator reads the frame, tens of microseconds later; frames that waited while its loop
  slept then enter the queue after the departures due meanwhile, so a burst finds room a real queue would
  not have had. Every run from before the choice existed was measured so (docs/notes/validation-loop.md,
  "The emulator's arrival mode moved the truth", for what it moved).

The choice changes what a kernel run measures, so it is part of a kernel run's identity (a store's runs of
one mode are never resumed as runs of the other) and of its provenance (``emulator_arrival``). Read on every
call, so the environment decides, and a bad value is refused before anything runs.
"""

from __future__ import annotations

import os

from ccfair.errors import InputError

ENV_VAR = "CCFAIR_EMU_ARRIVAL"
STAMP = "stamp"
READ = "read"
DEFAULT = STAMP
# What a stored run recorded when it predates the choice: the emulator then started frames at their read.
BEFORE_THE_CHOICE = READ


def arrival_mode() -> str:
    """The mode ``CCFAIR_EMU_ARRIVAL`` asks for; anything but ``stamp`` or ``read`` is an error naming it."""
    mode = os.environ.get(ENV_VAR, DEFAULT)
    if mode not in (STAMP, READ):
        raise InputError(ENV_VAR, f"expected '{STAMP}' or '{READ}', got '{mode}'")
    return mode
