"""Distributed execution: the same tasks on a Dask distributed scheduler (``--cluster tcp://host:8786``).

Workers need only ccfair installed: :func:`ccfair.sweep.task.run_task` is sent by reference, outcomes come
back to this process, which stays the store's single writer. At most a window of tasks (four per worker
thread) is in flight, so a plan of a million runs does not flood the scheduler. The wall-time limit is
enforced inside each run (between simulation chunks); a worker that dies is retried by Dask on another one
and, after Dask's allowed failures, the run is recorded as a ``crash``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from ccfair.errors import ScenarioError
from ccfair.sweep.task import RunOutcome, RunTask, failure, run_task

CONNECT_TIMEOUT_S = 30
TASKS_PER_THREAD = 4


def _connect(address: str) -> Any:
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise ScenarioError("--cluster", f"cannot reach a Dask scheduler at {address}: {e}") from None


def execute_dask(tasks: Iterable[RunTask], address: str) -> Generator[list[RunOutcome], None, None]:
    """Submits ``tasks`` to the scheduler at ``address``, yielding outcomes as they finish (those that
    finished together in one list)."""
    from distributed import as_completed

    client = _connect(address)
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
                    outcomes.append(future.result())
                except Exception as e:  # KilledWorker, a lost worker, a scheduler error
                    outcomes.append(failure(task.run_id, "crash", f"{type(e).__name__}: {e}", worker="dask"))
                future.release()
            for _ in batch:
                follow = submit()
                if follow is not None:
                    completed.add(follow)
            yield outcomes
    finally:
        client.close()
