"""The sweep plan's keys for the reference page: the keys ``ccfair.sweep.plan`` reads (``PLAN_KEYS``), each
with its type, default and meaning. A key read and not described here (or the other way round) is an error,
so the page cannot silently miss one."""

from __future__ import annotations

from ccfair.devtools.docs.markdown import cell
from ccfair.sweep.plan import DEFAULT_PLAN_SEED, MAX_REPETITIONS, PLAN_KEYS

# key -> (type, default, meaning)
_DESCRIBED: dict[str, tuple[str, str, str]] = {
    "name": (
        "string",
        "the file name without `.toml`",
        "the plan's name in the store; an edited plan of the "
        "same name replaces its list of runs and runs only those not done yet",
    ),
    "backend": (
        "string",
        '`"sim"`',
        '`"sim"` or `"kernel"` (real Linux TCP, root; `--backend` wins over it)',
    ),
    "scenario": (
        "path or table",
        "required",
        "the base scenario: a path relative to the plan, or a "
        "`[scenario]` table holding it; a seed in it is ignored",
    ),
    "repetitions": ("integer", "`1`", f"runs per cell, 1 to {MAX_REPETITIONS:,}"),
    "seed": (
        "integer",
        f"`{DEFAULT_PLAN_SEED}`",
        "every run's seed derives from it, the cell's coordinates and the repetition (SHA-256)",
    ),
    "flip_start_order": (
        "boolean",
        "`false`",
        "adds each run's mirrored run: the groups' distinct start times handed out in reverse",
    ),
    "out": (
        "string",
        "none",
        "where `ccfair sweep` writes when no `--out` is given, relative to the plan file (`ccfair init`'s "
        "plan: `results` beside it); without it, `results` in the current directory. Not part of the "
        "plan's stored definition",
    ),
    "grid": (
        "table",
        "none",
        "dotted scenario paths, each with a list of values; the cells are the product of the lists",
    ),
    "zip": (
        "array of tables",
        "none",
        "each `[[zip]]` a set of paths whose equally long lists vary together, as one axis",
    ),
    "exclude": (
        "array of tables",
        "none",
        "each `[[exclude]]` drops the cells matching every entry (a value or a list of values)",
    ),
}


def render() -> str:
    missing = [k for k in PLAN_KEYS if k not in _DESCRIBED]
    extra = [k for k in _DESCRIBED if k not in PLAN_KEYS]
    if missing or extra:
        raise ValueError(f"plan keys not described: {missing}; described but not read: {extra}")
    out = ["| Key | Type | Default | Meaning |", "|---|---|---|---|"]
    for key in PLAN_KEYS:
        kind, default, meaning = _DESCRIBED[key]
        out.append(f"| `{key}` | {cell(kind)} | {cell(default)} | {cell(meaning)} |")
    return "\n".join(out)
