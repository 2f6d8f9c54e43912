"""Distributed execution: the same tasks on a Dask distributed scheduler (``--cluster tcp://host:8786``, or
``tls://host:8786`` with certificates).

Workers need only ccfair installed: :func:`ccfair.sweep.task.run_task` is sent by reference, outcomes come
back to this process, which stays the store's single writer. At most a window of tasks (four per worker
thread) is in flight, so a plan of a million runs does not flood the scheduler. The wall-time limit is
enforced inside each run (between simulation chunks); a worker that dies is retried by Dask on another one
and, after Dask's allowed failures, the run is recorded as a ``crash``.

Trust boundary: outcomes come back through pickle, and Dask lets any worker run code in the client, so
anyone who can join the cluster can run code in the sweep process. A plain ``tcp://`` scheduler lets anyone
who reaches its port join. :func:`cluster_security` makes the connection TLS with a client certificate
(``tls://`` addresses; the scheduler then admits only workers and clients with certificates of its CA), and
:func:`insecure_warning` says so, once, when a sweep connects to a plain ``tcp://`` scheduler that is not on
this machine.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Generator, Iterable
from typing import Any
from urllib.parse import urlsplit

from ccfair.errors import InputError
from ccfair.sweep.task import RunOutcome, RunTask, failure, run_task

# How long a sweep waits for the scheduler before giving up (--cluster-timeout): long enough for a scheduler
# across a network, short enough that a wrong address fails at once instead of looking like a hang.
CONNECT_TIMEOUT_S = 5.0
DASK_MISSING = "needs Dask, which this installation lacks: pip install 'ccfair[dask]'"
TASKS_PER_THREAD = 4
TLS_OPTIONS = ("--tls-ca-file", "--tls-cert", "--tls-key")
_warned: set[str] = set()


def scheme(address: str) -> str:
    """The protocol of a Dask address (Dask's default, ``tcp``, when it names none)."""
    head, sep, _ = address.partition("://")
    return head.lower() if sep else "tcp"


def insecure_warning(address: str) -> str | None:
    """The warning for a plain ``tcp://`` scheduler address that is not a loopback address (or
    ``localhost``), else None."""
    if scheme(address) != "tcp":
        return None
    host = urlsplit(address if "://" in address else f"tcp://{address}").hostname or ""
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass  # a host name: it may resolve anywhere
    return (
        f"warning: --cluster {address} is plain TCP, unencrypted and unauthenticated: anyone who can reach "
        "the scheduler can join as a worker and run code in this sweep process; use a tls:// address with "
        "certificates, or keep the scheduler on a private network (docs/how-to/dask-cluster.md: Trust "
        "boundary)"
    )


def _readable(path: str, option: str) -> str:
    if not os.path.isfile(path):
        raise InputError(option, f"{path}: no such file")
    if not os.access(path, os.R_OK):
        raise InputError(option, f"{path}: cannot read it")
    return path


def cluster_security(
    address: str, ca_file: str | None = None, cert: str | None = None, key: str | None = None
) -> Any:
    """The ``distributed.security.Security`` for connecting to ``address``, or None for plain TCP.

    A ``tls://`` address needs the CA that signed the scheduler's certificate (``ca_file``) and this
    client's certificate (``cert``, with its private key in ``key`` or in the same file), or Dask's own
    configuration of them (``distributed.comm.tls.ca-file``, ``.client.cert``, ``.client.key``). The
    options name files; they apply to ``tls://`` addresses only."""
    given = {o: v for o, v in zip(TLS_OPTIONS, (ca_file, cert, key), strict=True) if v is not None}
    check_address(address)
    if scheme(address) != "tls":
        if given:
            raise InputError(next(iter(given)), "applies to a tls:// --cluster address only")
        return None
    require_distributed()
    # Dask is an optional extra (ccfair[dask]), here and below.
    import dask.config
    from distributed.security import Security

    if not given:
        # Security() reads these keys of Dask's configuration; without both it would connect with no client
        # certificate.
        configured = (dask.config.get(f"distributed.comm.tls.{k}", None) for k in ("ca-file", "client.cert"))
        if any(v is None for v in configured):
            raise InputError(
                "--cluster",
                f"{address} is a TLS address: give --tls-ca-file and --tls-cert (and --tls-key unless the "
                "certificate file holds the key), or set them in Dask's configuration (distributed.comm.tls)",
            )
        return Security(require_encryption=True)
    if ca_file is None or cert is None:
        missing = "--tls-ca-file" if ca_file is None else "--tls-cert"
        raise InputError(missing, "is needed with a tls:// --cluster address")
    return Security(
        require_encryption=True,
        tls_ca_file=_readable(ca_file, "--tls-ca-file"),
        tls_client_cert=_readable(cert, "--tls-cert"),
        tls_client_key=_readable(key, "--tls-key") if key is not None else None,
    )


def check_address(address: str) -> None:
    """Refuses, on ``--cluster``, an address Dask cannot connect to (an unknown protocol, a missing or bad
    host and port) before any client is made: a client made on such an address fails, and its finalizer then
    holds the process for 10 s at exit, printing a traceback."""
    require_distributed()
    from distributed.comm.addressing import get_address_host_port, parse_address  # an optional extra

    try:
        if parse_address(address)[0] != "inproc":  # in-process addresses have no host
            get_address_host_port(address)
    except ValueError as e:
        raise InputError("--cluster", f"{address!r} is not the address of a Dask scheduler: {e}") from None


def require_distributed() -> None:
    """Raises an InputError on ``--cluster`` saying how to install Dask when it is missing (the core
    install does not have it)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError("--cluster", DASK_MISSING) from None


def connect(address: str, security: Any = None, timeout_s: float = CONNECT_TIMEOUT_S) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``; an InputError on ``--cluster`` when Dask
    is not installed or the scheduler does not answer within ``timeout_s``."""
    check_address(address)
    from distributed import Client  # Dask is an optional extra

    warning = insecure_warning(address)
    if warning is not None and address not in _warned:
        _warned.add(address)
        print(warning, file=sys.stderr)
    try:
        return Client(address, timeout=timeout_s, set_as_default=False, security=security)
    except (OSError, TimeoutError, ValueError) as e:
        raise InputError(
            "--cluster", f"cannot reach a Dask scheduler at {address} within {timeout_s:g} s: {e}"
        ) from None


def checked_outcome(task: RunTask, result: object) -> RunOutcome:
    """A worker's result for ``task`` if it is that run's outcome; else the run's failure (kind ``crash``)
    saying what came back instead: anyone who joins the cluster can send anything, and one bad answer must
    not end the sweep or be stored as another run."""
    if isinstance(result, RunOutcome) and result.run_id == task.run_id:
        return result
    got = (
        f"the outcome of run {result.run_id!r}"
        if isinstance(result, RunOutcome)
        else f"a {type(result).__name__}"
    )
    return failure(
        task.run_id,
        "crash",
        f"the Dask worker returned {got} instead of this run's outcome",
        worker="dask",
        backend=task.backend,
    )


def execute_dask(tasks: Iterable[RunTask], client: Any) -> Generator[list[RunOutcome], None, None]:
    """Submits ``tasks`` through ``client`` (from :func:`connect`), yielding outcomes as they finish (those
    that finished together in one list); closes the client at the end."""
    from distributed import as_completed  # Dask is an optional extra

    try:
        threads = sum(client.nthreads().values())
        window = max(8, TASKS_PER_THREAD * threads)
        pending = iter(tasks)
        by_key: dict[str, RunTask] = {}

        def submit() -> Any:
            task = next(pending, None)
            if task is None:
                return None
            future = client.submit(run_task, task, key=f"ccfair-run-{task.run_id}", pure=False)
            by_key[future.key] = task
            return future

        first = [f for f in (submit() for _ in range(window)) if f is not None]
        completed = as_completed(first, loop=client.loop)
        while not completed.is_empty():
            batch = completed.next_batch(block=True)
            outcomes = []
            for future in batch:
                task = by_key.pop(future.key)
                try:
                    outcomes.append(checked_outcome(task, future.result()))
                except Exception as e:  # KilledWorker, a lost worker, a scheduler error
                    message = f"{type(e).__name__}: {e}"
                    outcomes.append(
                        failure(task.run_id, "crash", message, worker="dask", backend=task.backend)
                    )
                future.release()
            for _ in batch:
                follow = submit()
                if follow is not None:
                    completed.add(follow)
            yield outcomes
    finally:
        client.close()
