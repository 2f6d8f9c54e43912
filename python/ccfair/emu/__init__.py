"""The kernel backend: scenarios run against the Linux TCP stack in network namespaces, through ccfair's own
userspace bottleneck (the ``ccfair-emu`` binary, crate ``crates/ccfair-emu``).

- :func:`run_kernel` runs a scenario and returns the simulator's result shape (also ``ccfair.run(...,
  backend="kernel")`` and ``ccfair run --backend kernel``)
- :mod:`ccfair.emu.doctor`: what this host supports, and the forwarder's clean rate
- :mod:`ccfair.emu.compare`: simulator and kernel side by side
- :mod:`ccfair.emu.host`: this machine's facts the kernel's scenario rules take (the rules themselves are
  the scenario crate's, ``crates/ccfair-scenario/src/kernel.rs``, through
  :class:`ccfair.scenario.KernelScenario`); :mod:`ccfair.emu.netns`: the namespaces and their teardown guard;
  :mod:`ccfair.emu.collect`: the results in the simulator's format
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccfair.emu.run import EmulationError, run_kernel
    from ccfair.scenario import KernelScenario, kernel_scenario

__all__ = ["EmulationError", "KernelScenario", "kernel_scenario", "run_kernel"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: a module that needs only a light part of the package (its settings, such as
    # ccfair.emu.arrival) does not pay for the kernel backend's imports (numpy, the result format).
    if name in ("EmulationError", "run_kernel"):
        from ccfair.emu import run

        return getattr(run, name)
    if name in ("KernelScenario", "kernel_scenario"):
        from ccfair import scenario

        return getattr(scenario, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
