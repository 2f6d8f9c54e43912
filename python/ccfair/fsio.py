"""Writing output without ever destroying what ccfair did not write: every file and directory ccfair
writes for its user goes through here.

Rules, for every writer (``ccfair run --out``, ``sweep --out``, ``export --to``, ``plot -o``,
``report -o`` and their Python counterparts):

- **Paths are resolved first** (symbolic links and ``..``), so ``a/b/../../a`` is ``a``. A target that is
  the current directory or one of its ancestors, or that lies under ``/proc``, ``/sys`` or ``/dev``, is
  refused, and so is one whose nearest existing ancestor cannot be written.
- **Directories that are replaced** (a saved run, an export) are written complete into a hidden temporary
  sibling, fsynced, and renamed into place. An existing target is replaced only if it is empty or holds
  ccfair's marker file :data:`MARKER_FILE` of the same kind (``{"kind": ..., "format": 1,
  "ccfair_version": ...}``, written into every directory ccfair makes); a kind that existed before the
  marker may also recognise its earlier directories by their files (:attr:`Kind.legacy`). Any other existing
  directory is refused, naming what it holds, before anything is written.
- **Directories written in place** (a sweep's results directory) are accepted when absent, empty, or
  ccfair's own of that kind; ccfair adds its marker before anything else.
- **Single files** (figures, reports) go to a hidden temporary sibling and are renamed over the target; an
  existing target is replaced only if the writer recognises it as its own (``is_ours``).
- **Temporaries** are named ``.<target name>.<tmp|old>-<pid>-<start ticks>-<8 hex digits>``, with the
  owner's token of :mod:`ccfair.owner`. Before each write the stale temporaries next to the target whose
  owner is dead are removed (a write killed with SIGKILL cannot clean up); an ``old`` one, a replaced
  directory moved aside whose replacement never arrived, is moved back if its target is missing. Only
  names of exactly this form are touched, and never while their owner lives.

Refusals are :class:`~ccfair.errors.InputError` on the option that named the path (exit code 2);
failures while writing (a full disk, an I/O error) are :class:`~ccfair.errors.OutputError` (exit code 1)
saying what happened. Either way the target is left as it was.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair import _native, owner
from ccfair.errors import InputError, OutputError

MARKER_FILE = ".ccfair.json"
MARKER_FORMAT = 1
MARKER_MAX_BYTES = 4096
PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
LISTED_ENTRIES = 5
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<role>tmp|old)-(?P<pid>\d+)-(?P<ticks>\d+)-[0-9a-f]{8}$")


@dataclass(frozen=True)
class Kind:
    """A kind of output directory: ``name`` goes into its marker, ``what`` into messages (``"a saved
    run"``); ``legacy`` recognises one written before ccfair wrote markers, from its entry names."""

    name: str
    what: str
    legacy: Callable[[Path, Sequence[str]], bool] | None = None


# ------------------------------------------------------------------------------------------------- checks


def resolve(path: str | Path, option: str) -> Path:
    """``path`` made absolute with symbolic links and ``..`` resolved; refused under ``/proc``, ``/sys`` and
    ``/dev`` (kernel pseudo-filesystems, where nothing ccfair writes belongs)."""
    resolved = Path(os.path.realpath(path))
    for pseudo in PSEUDO_FILESYSTEMS:
        if resolved == pseudo or pseudo in resolved.parents:
            raise InputError(
                option, f"{path}: {pseudo} is a kernel pseudo-filesystem, not a place for output"
            )
    return resolved


def _check_writable_parent(target: Path, path: str | Path, option: str) -> None:
    """The nearest existing ancestor of ``target`` is a directory this process may create entries in."""
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(option, f"{path}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(option, f"{path}: cannot write in {ancestor}")


def _check_not_current(target: Path, path: str | Path, option: str) -> None:
    """A directory that is replaced must not hold the current directory (renaming it would move the ground
    under this process and its caller)."""
    cwd = Path(os.path.realpath(os.getcwd()))
    if target == cwd:
        raise InputError(option, f"{path} is the current directory; give a new directory's name")
    if target in cwd.parents:
        raise InputError(
            option, f"{path} contains the current directory ({cwd}); give a new directory's name"
        )


def read_marker(directory: Path) -> dict[str, Any] | None:
    """The marker of a directory ccfair wrote, or None (no marker, or not one of ccfair's)."""
    try:
        with open(directory / MARKER_FILE, "rb") as f:
            data = json.loads(f.read(MARKER_MAX_BYTES))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and isinstance(data.get("kind"), str):
        return data
    return None


def describe_entries(entries: Sequence[str], directory: Path) -> str:
    """``thesis.tex, figures/ and 3 more``: what a directory holds, for messages."""
    shown = [f"{e}/" if (directory / e).is_dir() else e for e in entries[:LISTED_ENTRIES]]
    rest = len(entries) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def _foreign(directory: Path, kind: Kind) -> str | None:
    """Why ``directory`` (which exists) is not ``kind``'s to write, or None if it is."""
    entries = sorted(os.listdir(directory))
    if not entries:
        return None
    marker = read_marker(directory)
    if marker is not None:
        if marker["kind"] == kind.name:
            return None
        return f"is a ccfair {marker['kind']} directory, not {kind.what}"
    if kind.legacy is not None and kind.legacy(directory, entries):
        return None
    return (
        f"exists and is not {kind.what} (it holds {describe_entries(entries, directory)}); give a new or "
        "empty directory (ccfair never writes over a directory it did not make)"
    )


def check_dir(path: str | Path, kind: Kind, option: str, *, replace: bool = True) -> Path:
    """Checks that ``path`` may receive a directory of ``kind`` and returns it resolved; raises a
    InputError on ``option`` otherwise. ``replace``: the directory is replaced as a whole (a run, an
    export), else written in place (a results directory). Call it before any long work, so that a refusal
    comes first; the writers check again."""
    target = resolve(path, option)
    if replace:
        _check_not_current(target, path, option)
    if target.exists():
        if not target.is_dir():
            raise InputError(option, f"{path} exists and is not a directory")
        why = _foreign(target, kind)
        if why is not None:
            raise InputError(option, f"{path} {why}")
        where = target.parent if replace else target
        if not os.access(where, os.W_OK | os.X_OK):
            raise InputError(option, f"{path}: cannot write in {where}")
    else:
        _check_writable_parent(target, path, option)
    return target


def check_file(path: str | Path, option: str, is_ours: Callable[[Path], bool], what: str) -> Path:
    """Checks that ``path`` may receive a file and returns it resolved: its directory exists and is
    writable, and an existing file there is one ``is_ours`` recognises (``what`` names such files in
    messages, e.g. ``"figures"``)."""
    target = resolve(path, option)
    if target.is_dir():
        raise InputError(option, f"{path} is a directory; give a file name")
    if not target.parent.is_dir():
        raise InputError(option, f"{Path(path).parent} does not exist")
    if target.exists() and not is_ours(target):
        raise InputError(
            option,
            f"{path} exists and was not written by ccfair; give another name or remove it (ccfair replaces "
            f"only {what} it wrote)",
        )
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise InputError(option, f"{path}: cannot write in {target.parent}")
    return target


def json_generated_by(path: Path, generator: str) -> bool:
    """Whether ``path`` is a JSON document whose ``generator`` field is ``generator``: how a command that
    writes JSON recognises its own files (an ``is_ours`` for :func:`check_file`)."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(1 << 24))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("generator") == generator


# --------------------------------------------------------------------------------------------- primitives


def write_synced(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` (created or truncated) and fsyncs it."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Makes the entries of directory ``path`` (creations, renames) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_name(target: Path, role: str = "tmp") -> Path:
    """A fresh temporary sibling name of ``target`` carrying this process's owner token."""
    # os.urandom as secrets.token_hex does it: importing secrets (random, hmac) costs every command.
    return target.parent / f".{target.name}.{role}-{owner.token()}-{os.urandom(4).hex()}"


def _new_temporary_dir(target: Path, role: str) -> Path:
    while True:
        path = temporary_name(target, role)
        try:
            path.mkdir()
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue
        return path


def replace_file(target: Path, data: bytes, *, sync: bool = True) -> None:
    """Writes ``data`` to a temporary sibling (fsynced unless not ``sync``) and renames it over ``target``;
    a failure leaves ``target`` as it was and no temporary. No checks: for files inside a directory that is
    already ccfair's (see :func:`write_file` for a user's target)."""
    tmp = temporary_name(target)
    try:
        if sync:
            write_synced(tmp, data)
        else:
            tmp.write_bytes(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def cache_file(name: str, env_var: str) -> Path:
    """Where ccfair keeps a measurement of this host (``doctor.json``, ``speed.json``): ``$env_var`` when
    set, else ``ccfair/NAME`` in ``$XDG_CACHE_HOME`` (``~/.cache`` by default)."""
    if os.environ.get(env_var):
        return Path(os.environ[env_var])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ccfair" / name


def write_marker(directory: Path, kind: Kind) -> None:
    """Puts ``kind``'s marker into ``directory`` (fsynced)."""
    document = {"kind": kind.name, "format": MARKER_FORMAT, "ccfair_version": _native.__version__}
    write_synced(directory / MARKER_FILE, (json.dumps(document) + "\n").encode())


def remove_stale(parent: Path) -> list[Path]:
    """Removes the temporaries in ``parent`` whose owner is dead (see the module docstring); an ``old``
    directory whose target is missing is moved back instead. Returns the paths removed or moved back."""
    handled: list[Path] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return handled
    for name in names:
        m = _TEMPORARY.match(name)
        if m is None or owner.alive(int(m["pid"]), int(m["ticks"])):
            continue
        path = parent / name
        original = parent / m["name"]
        try:
            if m["role"] == "old" and path.is_dir() and not original.exists() and not original.is_symlink():
                os.rename(path, original)
            elif path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue  # another process got there first, or it cannot be removed: leave it
        handled.append(path)
    return handled


def failure_text(e: BaseException) -> str:
    """What went wrong while writing, in words: ``no space left on device`` for a full disk, whether the
    error came from the operating system or from a library (DuckDB) that words it its own way."""
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        return "no space left on device"
    text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    if "no space left on device" in text.lower():
        return "no space left on device"
    return text or type(e).__name__


# ---------------------------------------------------------------------------------------------- writers


def write_dir(
    path: str | Path,
    kind: Kind,
    fill: Callable[[Path], None],
    option: str,
    failures: tuple[type[BaseException], ...] = (OSError,),
) -> Path:
    """Writes a directory of ``kind`` at ``path``: ``fill(tmp)`` writes the files into a temporary sibling
    (and fsyncs them), the marker is added, and the temporary replaces the target (see the module
    docstring). ``failures``: the exceptions of ``fill`` that mean writing failed (a library's own I/O
    error besides OSError); they become an OutputError. Returns the resolved target."""
    target = check_dir(path, kind, option)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(parent)
        tmp = _new_temporary_dir(target, "tmp")
    except OSError as e:
        raise OutputError(option, f"cannot write {path}: {failure_text(e)}") from None
    try:
        fill(tmp)
        write_marker(tmp, kind)
        fsync_dir(tmp)
        _replace_dir(tmp, target)
    except failures as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(option, f"cannot write {path}: {failure_text(e)}; it is left as it was") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _replace_dir(new: Path, target: Path) -> None:
    """Renames ``new`` to ``target``. An empty directory is replaced by the rename itself; a full one is
    first moved aside, and moved back if the second rename fails."""
    if not target.exists() or not any(target.iterdir()):
        os.rename(new, target)
    else:
        old = _new_temporary_dir(target, "old")
        os.rename(target, old)  # onto the empty directory reserved for it
        try:
            os.rename(new, target)
        except BaseException:
            os.rename(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(target.parent)


def prepare_dir(path: str | Path, kind: Kind, option: str) -> Path:
    """Makes ``path`` a directory of ``kind`` to be written in place: created if absent, its marker added
    if missing. Returns the resolved directory."""
    target = check_dir(path, kind, option, replace=False)
    try:
        target.mkdir(parents=True, exist_ok=True)
        marker = read_marker(target)
        if marker is None:
            write_marker(target, kind)
            fsync_dir(target)
    except OSError as e:
        raise OutputError(option, f"cannot write {path}: {failure_text(e)}") from None
    return target


def write_file(
    path: str | Path, data: bytes, option: str, is_ours: Callable[[Path], bool], what: str
) -> Path:
    """Writes one file atomically (:func:`replace_file`) after :func:`check_file`; returns its path."""
    target = check_file(path, option, is_ours, what)
    try:
        remove_stale(target.parent)
        replace_file(target, data)
        fsync_dir(target.parent)
    except OSError as e:
        raise OutputError(option, f"cannot write {path}: {failure_text(e)}; it is left as it was") from None
    return target


def write_new_files(directory: str | Path, files: dict[str, bytes], option: str) -> list[Path]:
    """Writes ``files`` (name -> content) into ``directory``, created if absent. Nothing is ever replaced:
    if any of the files exists, none is written (an InputError on ``option`` names them). Each file is
    written to a temporary sibling, fsynced and linked into place, which fails rather than overwrite a
    file that appeared meanwhile. Returns the paths written."""
    target = resolve(directory, option)
    if target.exists() and not target.is_dir():
        raise InputError(option, f"{directory} exists and is not a directory")
    existing = [name for name in files if (target / name).exists() or (target / name).is_symlink()]
    if existing:
        raise InputError(
            option,
            f"{directory} already holds {', '.join(existing)}; ccfair does not overwrite files: give another "
            "directory, or move them away",
        )
    if not target.exists():
        _check_writable_parent(target, directory, option)
    elif not os.access(target, os.W_OK | os.X_OK):
        raise InputError(option, f"{directory}: cannot write in {target}")
    written: list[Path] = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            path = target / name
            tmp = temporary_name(path)
            try:
                write_synced(tmp, data)
                os.link(tmp, path)  # fails if the file exists: never replaces
            finally:
                tmp.unlink(missing_ok=True)
            written.append(path)
        fsync_dir(target)
    except FileExistsError as e:
        for path in written:
            path.unlink(missing_ok=True)
        raise InputError(
            option, f"{e.filename2 or e.filename} appeared while writing; nothing was written"
        ) from None
    except OSError as e:
        for path in written:
            path.unlink(missing_ok=True)
        raise OutputError(option, f"cannot write into {directory}: {failure_text(e)}") from None
    return written
