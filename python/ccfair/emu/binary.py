"""Where the ``ccfair-emu`` binary is: ``$CCFAIR_EMU`` if set, else the one inside the package
(``ccfair/bin/ccfair-emu``, which the wheels carry), else the workspace's release build of a source checkout
(``$CARGO_TARGET_DIR/release`` or ``target/release`` next to this source tree, which ``make setup`` builds),
else ``ccfair-emu`` on the PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ccfair.errors import InputError

ENV_VAR = "CCFAIR_EMU"
NAME = "ccfair-emu"


PACKAGED = Path(__file__).resolve().parents[1] / "bin" / NAME


def candidates() -> list[Path]:
    repo = Path(__file__).resolve().parents[3]
    paths = [PACKAGED]
    if os.environ.get("CARGO_TARGET_DIR"):
        paths.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / NAME)
    paths.append(repo / "target" / "release" / NAME)
    found = shutil.which(NAME)
    if found:
        paths.append(Path(found))
    return paths


def emulator_binary() -> str:
    """The binary's path; raises :class:`InputError` when there is none."""
    env = os.environ.get(ENV_VAR)
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise InputError(ENV_VAR, f"{env} is not an executable file")
        return env
    for p in candidates():
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    raise InputError(
        "backend",
        f"the emulator binary {NAME} is not installed: the wheels carry it (pip install ccfair); in a source "
        f"checkout run `make setup` (or `cargo build --release -p ccfair-emu`); or set {ENV_VAR} to its path",
    )
