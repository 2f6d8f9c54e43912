"""``ccfair reproduce``: published fairness studies run end to end and scored against their findings.

One module per study (:mod:`.rueth_tma19`, :mod:`.fejes_nadas`, :mod:`.sasaki_cloudnet18`,
:mod:`.philip_imc21`) holds its setup at each scale, its findings and its paper-style figures;
:mod:`.base` defines what a study is made of, :mod:`.scorecard` scores the findings. The runs go through
the sweep machinery (:mod:`ccfair.studies.run`) into a normal results directory, on the simulator or, where
a study's scale fits, on the kernel backend.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from ccfair.errors import InputError

if TYPE_CHECKING:
    # The studies (pandas, NumPy) load with the first study, not with the package: the command line's parser
    # reads the scales (:mod:`.scales`) through it.
    from ccfair.studies.reproduce.base import Study

MODULES = {
    "rueth-tma19": "rueth_tma19",
    "fejes-nadas": "fejes_nadas",
    "sasaki-cloudnet18": "sasaki_cloudnet18",
    "philip-imc21": "philip_imc21",
}


def study_names() -> list[str]:
    return list(MODULES)


def get_study(name: str, option: str = "STUDY") -> Study:
    if name not in MODULES:
        raise InputError(option, f"unknown study {name!r}; the studies: {', '.join(MODULES)}")
    study: Study = import_module(f"{__name__}.{MODULES[name]}").STUDY
    return study
