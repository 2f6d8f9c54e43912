"""Local execution: ``jobs`` worker processes, one run per task, outcomes streamed back as they finish
(in batches of those that finished together).

Why not ``concurrent.futures.ProcessPoolExecutor``: a worker that dies (an abort in the native core, the
OOM killer) breaks that whole pool, and a hung run cannot be stopped. Here each worker has its own pipe, so
the parent knows which run each one holds: a dead worker becomes a ``crash`` failure of that run, a run
past its wall-time limit plus a grace period is killed as a ``timeout`` (the worker normally stops it
itself between simulation chunks), and in both cases a fresh worker takes over. Workers ignore Ctrl-C (the
parent decides), stop when the parent disappears, even in the middle of a run, and die quietly of a SIGTERM
(after a kernel run's teardown).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from ccfair.sweep.task import Orphaned, RunOutcome, RunTask, failure, run_task

TaskFn = Callable[[RunTask, int | None], RunOutcome]


def default_jobs() -> int:
    """All cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def hard_limit_s(time_limit_s: float) -> float:
    """When the parent kills a run that did not stop itself: the limit plus a grace period for the work
    after the simulation (metrics, encoding), which the in-run check does not cover."""
    return time_limit_s + max(10.0, time_limit_s / 2)


def _context() -> Any:
    # forkserver: workers fork from a clean server that has already imported ccfair (fast restarts, no
    # fork of the parent's DuckDB threads); spawn where forkserver does not exist.
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["ccfair.sweep.task"])
        return ctx
    return multiprocessing.get_context("spawn")


def _worker_main(conn: Connection, task_fn: TaskFn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            outcome = task_fn(task, parent)
        except Orphaned:
            return
        except KeyboardInterrupt:
            # Workers ignore SIGINT, so this is SIGTERM, which a kernel run turns into KeyboardInterrupt to
            # tear its namespaces down. That done, die of the signal as asked, without a traceback.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        try:
            conn.send(outcome)
        except OSError:
            return


@dataclass
class _Worker:
    process: Any
    conn: Connection
    task: RunTask | None = None
    started: float = 0.0


class LocalPool:
    """Runs tasks on ``jobs`` worker processes; use :meth:`run` inside ``with``."""

    def __init__(self, jobs: int, task_fn: TaskFn = run_task) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self._jobs = jobs
        self._task_fn = task_fn
        self._ctx = _context()
        self._workers: list[_Worker] = []

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> _Worker:
        parent_end, child_end = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_worker_main, args=(child_end, self._task_fn), daemon=True)
        process.start()
        child_end.close()
        worker = _Worker(process, parent_end)
        self._workers.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        """Kills and forgets a worker (after a crash or a timeout)."""
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join()
        worker.conn.close()
        self._workers.remove(worker)

    def run(self, tasks: Iterable[RunTask]) -> Iterator[list[RunOutcome]]:
        """Yields the outcomes of the tasks as they finish, those that finished together in one list."""
        queue = deque(tasks)
        while queue or any(w.task is not None for w in self._workers):
            self._dispatch(queue)
            busy = [w for w in self._workers if w.task is not None]
            ready = wait(
                [w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=self._wait_s(busy)
            )
            outcomes = [o for o in (self._collect(w, ready) for w in busy) if o is not None]
            # Idle workers get their next task before the caller stores these outcomes, so the workers
            # compute while the single writer commits.
            self._dispatch(queue)
            if outcomes:
                yield outcomes

    def _dispatch(self, queue: deque[RunTask]) -> None:
        """Gives queued tasks to idle workers, starting workers up to ``jobs`` (replacing retired ones)."""
        while queue:
            worker = next((w for w in self._workers if w.task is None), None)
            if worker is None:
                if len(self._workers) >= self._jobs:
                    return
                worker = self._start()
            task = queue.popleft()
            try:
                worker.conn.send(task)
            except OSError:  # the worker died while idle: retire it, the task goes to another one
                queue.appendleft(task)
                self._retire(worker)
                continue
            worker.task, worker.started = task, time.monotonic()

    def _wait_s(self, busy: list[_Worker]) -> float | None:
        deadlines = [
            w.started + hard_limit_s(w.task.time_limit_s)
            for w in busy
            if w.task is not None and w.task.time_limit_s is not None
        ]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def _collect(self, worker: _Worker, ready: list[Any]) -> RunOutcome | None:
        """The outcome of ``worker``'s task if it has one now (result, crash or hard timeout), else None."""
        task = worker.task
        assert task is not None
        if worker.conn in ready:
            try:
                outcome: RunOutcome = worker.conn.recv()
            except (EOFError, OSError):
                outcome = self._crashed(worker, task)
            else:
                worker.task = None
            return outcome
        if worker.process.sentinel in ready:
            return self._crashed(worker, task)
        limit = task.time_limit_s
        if limit is not None and time.monotonic() >= worker.started + hard_limit_s(limit):
            self._retire(worker)
            return failure(
                task.run_id,
                "timeout",
                f"killed after {hard_limit_s(limit):g} s (wall-time limit {limit:g} s)",
                backend=task.backend,
            )
        return None

    def _crashed(self, worker: _Worker, task: RunTask) -> RunOutcome:
        worker.process.join(timeout=5)
        code = worker.process.exitcode
        pid = worker.process.pid
        self._retire(worker)
        how = (
            f"killed by signal {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exit {code}"
        )
        return failure(
            task.run_id, "crash", f"worker process died ({how})", worker=f"pid {pid}", backend=task.backend
        )

    def close(self) -> None:
        """Stops every worker: idle ones are asked to exit, busy ones are killed (their runs are lost, as a
        kill of the sweep would lose them)."""
        for worker in list(self._workers):
            if worker.task is None:
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
            else:
                worker.process.kill()
        for worker in list(self._workers):
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers.clear()


def execute_local(
    tasks: Iterable[RunTask], jobs: int, task_fn: TaskFn = run_task
) -> Generator[list[RunOutcome], None, None]:
    """Runs ``tasks`` on ``jobs`` local worker processes, yielding outcomes as they finish (those that
    finished together in one list)."""
    with LocalPool(jobs, task_fn) as pool:
        yield from pool.run(tasks)
