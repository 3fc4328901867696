"""Where the work runs: inline, a local process pool, or a Dask cluster.

All three sit behind ``concurrent.futures.Executor``. Tasks carry plain data (a repository
path, records, the config) and open the repository themselves: a ``pygit2.Repository``
cannot be pickled, and a Dask worker lives in another process or on another machine. Tasks
only read; the parent writes every result, so a retried task is harmless. ``in_order`` runs a
stream of tasks a few ahead and hands their results back in order; ``Lookahead`` does the same for a
sequential choice that may skip items (the clean sample).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from miner.core.config import Config
from miner.core.errors import MinerError, MissingObjectError, TransientGitError, WorkerLostError
from miner.core.records import CommitMeta, FixCommit, Fixture, Label
from miner.git import Repo
from miner.stages.anchors import Anchor, Anchored, build_chain
from miner.stages.blame import label_fixes
from miner.stages.bug import added_in
from miner.stages.clean import Listed, refusal
from miner.stages.fixture import FixtureJob, Source, make_fixture
from miner.stages.vet import vet_fix

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
# Seconds each task sleeps before working: lets a test kill a worker while a task is running.
_TASK_DELAY = float(os.environ.get("MINER_TASK_DELAY", "0"))
ExecutorKind = Literal["local", "dask"]


class InlineExecutor(Executor):
    """Runs each task at once in this process: ``-j 1``, and the reference for every other engine."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def make_executor(
    kind: ExecutorKind, jobs: int, address: str | None = None, scheduler_file: str | None = None
) -> tuple[Executor, Callable[[], None]]:
    """An executor and the function that shuts it down."""
    if kind == "dask":
        try:
            from distributed import Client
        except ImportError as exc:
            raise MinerError('--executor dask needs the dask extra: pip install "miner[dask]"') from exc
        if not address and not scheduler_file:
            raise MinerError("--executor dask needs --address tcp://HOST:PORT or --scheduler-file FILE")
        try:
            client = Client(address, timeout="20s") if address else Client(scheduler_file=scheduler_file, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise MinerError(f"cannot reach the Dask scheduler ({exc}); check --address and that the cluster runs") from exc
        executor = client.get_executor(pure=False)
        return executor, client.close
    if jobs <= 1:
        inline = InlineExecutor()
        return inline, lambda: None
    context = _QuietSpawn()
    _quiet_pool_bookkeeping()
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    return pool, lambda: _stop(pool, context)


def start_workers(pool: Executor, jobs: int) -> None:
    """Have a local pool start its workers now (each imports miner, about half a second), so that they
    are ready when the first tasks come: a build starts them before it walks the history."""
    if isinstance(pool, ProcessPoolExecutor):
        with _losing_workers(pool):  # a worker killed while the next one starts
            for _ in range(jobs):
                pool.submit(_ready)


def _ready() -> None:
    """A task that does nothing: the worker that runs it has started and imported what tasks use."""


def _quiet_pool_bookkeeping() -> None:
    """Keep the pool's own bookkeeping thread from printing a traceback when a worker dies.

    On Python 3.11 the thread that notices a dead worker can fail while the main thread starts
    another (``RuntimeError: dictionary changed size during iteration`` in ``get_n_children_alive``),
    and Python prints that thread's traceback. The build does not depend on it: ``_result`` looks at
    the workers every second, and a lost one fails the build in one line (``WorkerLostError``).
    Other threads' errors are printed as before."""
    previous = threading.excepthook
    if getattr(previous, "_miner", False):
        return

    def hook(args: threading.ExceptHookArgs) -> None:
        manager = (
            type(args.thread).__name__ == "_ExecutorManagerThread"
            and type(args.thread).__module__ == "concurrent.futures.process"
        )
        if not manager:
            previous(args)

    hook._miner = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def _stop(pool: ProcessPoolExecutor, context: _QuietSpawn) -> None:
    """Shut a pool down. A pool that lost a worker, or that was interrupted between starting a
    worker and recording it, is not waited for: its bookkeeping may wait forever for the dead
    worker, or for a worker that takes another's stop sentinel. Its live workers are killed."""
    recorded = set(getattr(pool, "_processes", None) or {})  # ProcessPoolExecutor's own record of its workers
    stray = any(p.pid not in recorded and p.is_alive() for p in context.started)
    # Only the pool's manager thread waits for its workers. A signal between recording a worker and
    # starting that thread leaves a worker nobody waits for: shutdown would let the queues go (and their
    # semaphores with them) while the worker still starts, and it would fail in its bootstrap. A signal
    # between making the thread and starting it leaves one that shutdown cannot join (RuntimeError).
    manager = getattr(pool, "_executor_manager_thread", None)
    unwaited = bool(recorded) and (manager is None or not manager.is_alive())
    try:
        if not stray and not unwaited and not _lost_a_worker(pool):
            pool.shutdown(cancel_futures=True)
        else:
            _kill(context.started)
            pool.shutdown(wait=False, cancel_futures=True)
    finally:
        # A worker that a broken pool told to stop (SIGTERM) while it was still starting holds that signal
        # (see _DeafProcess) and goes on starting; once this process exits, the queues' semaphores are gone
        # and its start fails with a traceback; so would one still starting when anything cuts the shutdown
        # short. None is left running: after a clean shutdown none is alive.
        _kill(context.started)


def _kill(processes: list[_DeafProcess]) -> None:
    alive = [process for process in processes if process.is_alive()]
    for process in alive:  # all first: a signal between two leaves as few as can be
        process.kill()
    for process in alive:
        process.join()


_HELD = (signal.SIGINT, signal.SIGTERM)


class _DeafProcess(multiprocessing.get_context("spawn").Process):  # type: ignore[misc]
    """A worker process that no signal interrupts while it starts.

    Until a spawned worker runs its own code it is Python's bootstrap, which prints a traceback when
    a signal stops it, when the parent stops while writing its start-up data, or when the parent has
    gone and its queues' semaphores with it. So the parent starts it with SIGINT and SIGTERM
    blocked (the child inherits the mask) and holds a signal that arrives meanwhile until the start
    is done and the pool can stop the worker. Once running, the worker ignores SIGINT: a terminal's
    Ctrl-C reaches every process of the group, and the parent, which stops the pool and keeps what
    was mined, says so once."""

    def start(self) -> None:
        held: list[int] = []  # the signals that arrived while the worker started
        previous = {s: signal.getsignal(s) for s in _HELD} if threading.current_thread() is threading.main_thread() else {}
        if any(h is None for h in previous.values()):  # a handler set outside Python cannot be put back
            previous = {}
        for s in previous:
            signal.signal(s, lambda signum, frame: held.append(signum))
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for s, handler in previous.items():
                signal.signal(s, handler)
        for signum in held:
            signal.raise_signal(signum)

    def run(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
        super().run()


class _QuietSpawn(type(multiprocessing.get_context("spawn"))):  # type: ignore[misc]
    """The spawn context, starting deaf workers and remembering each, recorded by the pool or not."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[_DeafProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> _DeafProcess:  # noqa: N802 - multiprocessing's name
        process = _DeafProcess(*args, **kwargs)
        self.started.append(process)
        return process


# -- tasks: module-level functions of plain data, so any engine can run them ----------------


_OPEN: dict[tuple[str, tuple[str, ...], str | None], Repo] = {}
_ANCHORED: dict[RepoRef, Anchored] = {}


@dataclass(frozen=True)
class RepoRef:
    """How a task opens the repository: its path, paths to leave out, and the commit-graph overlay."""

    path: str
    exclude: tuple[str, ...] = ()
    overlay: str | None = None  # local to the machine that wrote it; a remote worker does without
    anchors: str | None = None  # blame anchors (see miner.stages.anchors), a directory on the same machine

    def open(self) -> Repo:
        """The repository, opened once per worker process and reused by its later tasks, with or
        without anchors (its lookup caches stay warm: the commits labelling read are those the
        fixtures are made of next, and a worker holds one copy of them, not one per task)."""
        key = (self.path, self.exclude, self.overlay)
        repo = _OPEN.get(key)
        if repo is None:
            _OPEN.clear()
            repo = _OPEN[key] = Repo(self.path, self.exclude, self.overlay)
        return repo

    @staticmethod
    def of(repo: Repo, anchors: str | None = None) -> RepoRef:
        return RepoRef(str(repo.git_dir), repo.exclude, repo.overlay, anchors)

    def history(self) -> Repo | Anchored:
        """What labelling blames through: the repository, from its anchors when it has some (kept
        per worker, like the repository, so each file's anchors are read once, not once a task)."""
        repo = self.open()
        if not self.anchors or not Path(self.anchors).is_dir():
            return repo
        if self not in _ANCHORED:
            _ANCHORED.clear()
            _ANCHORED[self] = Anchored(repo, self.anchors)
        return _ANCHORED[self]


@dataclass(frozen=True)
class LabelResult:
    fix: str
    labels: tuple[Label, ...]
    dropped: dict[str, int]
    vetted: str | None = None  # why the fix's diff shows it repairs no behaviour (miner.stages.vet), if it does not


def label_task(ref: RepoRef, fixes: tuple[FixCommit, ...], config: Config) -> list[LabelResult]:
    """Blame and label a chunk of fixes; one result per fix, with what it dropped.

    A fix whose diff or blame needs an object the repository lacks is dropped alone
    (``fix_missing_object``), not with its whole chunk.
    """
    _delay()
    repo, history = ref.open(), ref.history()
    try:
        return _label_chunk(repo, history, fixes, config)
    except MissingObjectError:
        results: list[LabelResult] = []
        for fix in fixes:
            try:
                results += _label_chunk(repo, history, (fix,), config)
            except MissingObjectError:
                results.append(LabelResult(fix=fix.meta.sha, labels=(), dropped={"fix_missing_object": 1}))
        return results


def _label_chunk(repo: Repo, history: Repo | Anchored, fixes: tuple[FixCommit, ...], config: Config) -> list[LabelResult]:
    by_sha = {f.meta.sha: f for f in fixes}
    results: list[LabelResult] = []
    for sha, diffs in repo.diffs(by_sha):
        fix, refused = vet_fix(by_sha[sha], diffs, repo.blob, config)
        if fix is None:
            results.append(LabelResult(fix=sha, labels=(), dropped={}, vetted=refused))
            continue
        dropped: Counter[str] = Counter()
        labels = tuple(label_fixes([(fix, diffs)], history, repo.meta, config, dropped))
        results.append(LabelResult(fix=sha, labels=labels, dropped=dict(dropped)))
    return results


def anchor_task(ref: RepoRef, head: str, path: str, every: int) -> tuple[str, list[Anchor]]:
    """The blame anchors of one much-fixed path; the parent writes them where workers read them.

    A path git cannot blame all the way (an object the repository lacks, a submodule) gets no
    anchors: its fixes are blamed in full, and labelling reports what went wrong for each.
    """
    _delay()
    try:
        return path, build_chain(ref.open(), head, path, every)
    except TransientGitError:
        raise  # a failure of this run: the next run builds the anchors, the same as an uninterrupted one
    except MinerError:
        return path, []


def clean_check_task(
    ref: RepoRef, head: str, config: Config, fixes: frozenset[str], meta: CommitMeta, listed: Listed | None = None
) -> str | None:
    """Why a clean candidate is refused by the checks that read git (miner.stages.clean.refusal), or None."""
    _delay()
    return refusal(ref.open(), head, config, fixes, meta, listed)


def fixture_task(ref: RepoRef, source: Source, jobs: tuple[FixtureJob, ...], config: Config) -> list[Fixture]:
    repo = ref.open()
    repo.read_ahead(job.head for job in jobs)
    out: list[Fixture] = []
    for job in jobs:
        try:
            out.append(_fixture(repo, source, job, config))
        except MissingObjectError:
            continue  # the parent counts fixtures that did not come back
    return out


def _fixture(repo: Repo, source: Source, job: FixtureJob, config: Config) -> Fixture:
    meta = repo.meta(job.head)
    if meta is None:
        raise MinerError(f"{source.repository}: commit {job.head} vanished while mining; run the build again")
    return make_fixture(repo, source, job, meta, config)


def added_task(ref: RepoRef, shas: tuple[str, ...]) -> list[tuple[str, dict[str, set[int]] | None]]:
    """The lines each change added, by path (miner.stages.bug.added_in); None for a change whose diff
    names an object the repository lacks."""
    _delay()
    repo = ref.open()
    repo.read_ahead(shas)
    added = added_in(repo)
    out: list[tuple[str, dict[str, set[int]] | None]] = []
    for sha in shas:
        try:
            out.append((sha, added(sha)))
        except MissingObjectError:
            out.append((sha, None))
    return out


def _delay() -> None:
    delay = float(os.environ.get("MINER_TASK_DELAY", _TASK_DELAY))
    if delay:
        time.sleep(delay)


def authorship_task(ref: RepoRef, head: str, paths: tuple[str, ...]) -> list[tuple[str, dict[str, int] | None]]:
    """For each path, how many of its lines at ``head`` each commit wrote (None: no such path)."""
    _delay()
    repo = ref.open()
    out: list[tuple[str, dict[str, int] | None]] = []
    for path in paths:
        try:
            out.append((path, repo.authorship(head, path)))
        except MissingObjectError:
            out.append((path, None))
    return out


def in_order(pool: Executor, fn: Callable[..., T], calls: Iterable[tuple[Any, ...]], ahead: int) -> Iterator[T]:
    """``fn(*args)`` for each ``args`` of ``calls`` on the pool, results in call order.

    At most ``ahead`` tasks are out at once, and a result is let go as soon as it is handed
    over: the parent never holds more than a few finished results (fixtures carry whole files).
    """
    pending: deque[Future[T]] = deque()
    with _losing_workers(pool):
        for args in calls:
            pending.append(pool.submit(fn, *args))
            if len(pending) >= ahead:
                yield _result(pending.popleft(), pool)
        while pending:
            yield _result(pending.popleft(), pool)


@contextmanager
def _losing_workers(pool: Executor) -> Iterator[None]:
    """What a local pool that lost a worker raises, while tasks are given to it or awaited, said in one
    line (``WorkerLostError``): a broken pool, or a failed start of the next worker (ValueError,
    OSError "handle is closed") once one has died. Anything else goes on as it was."""
    try:
        yield
    except (BrokenExecutor, ValueError, OSError) as exc:
        if isinstance(exc, BrokenExecutor) or _lost_a_worker(pool):
            raise WorkerLostError(
                "a worker process of the build died (killed, or out of memory); what was mined "
                "so far is kept: run the same command again to resume"
            ) from None
        raise


class Lookahead(Generic[K, T]):
    """``fn(*args(key))`` for the keys of a planned order, run on the pool a few keys ahead of the one
    asked for, so a sequential choice (the clean sample) keeps the workers busy.

    Keys may be skipped (asking for a later one passes over those before it: work already started
    on them is kept in case they are asked for later, or wasted); each key is answered once. With
    ``ahead`` 0 nothing runs before it is asked for. The answers are ``fn``'s, whatever ran ahead.
    ``args`` is called only for the keys that run, when they are sent.
    """

    def __init__(self, pool: Executor, fn: Callable[..., T], ahead: int, args: Callable[[K], tuple[Any, ...]]) -> None:
        self.pool, self.fn, self.ahead, self.args = pool, fn, ahead, args
        self._keys: list[K] = []
        self._at: dict[K, list[int]] = {}
        self._futures: dict[K, Future[T]] = {}
        self._asked: set[K] = set()
        self._cursor = 0

    def plan(self, keys: list[K]) -> None:
        self.close()
        self._keys, self._cursor, self._at = keys, 0, {}
        for n, key in enumerate(keys):
            self._at.setdefault(key, []).append(n)

    def get(self, key: K) -> T:
        """The answer for ``key`` (planned or not)."""
        where = next((n for n in self._at.get(key, []) if n >= self._cursor), None)
        with _losing_workers(self.pool):
            if where is not None:
                self._cursor = where + 1
                for k in self._keys[where : where + 1 + self.ahead]:
                    if k not in self._futures and (k == key or k not in self._asked):
                        self._futures[k] = self.pool.submit(self.fn, *self.args(k))
            future = self._futures.pop(key, None) or self.pool.submit(self.fn, *self.args(key))
            self._asked.add(key)
            return _result(future, self.pool)

    def close(self) -> None:
        """Cancel what ran ahead and was never asked for."""
        for future in self._futures.values():
            future.cancel()
        self._futures = {}
        self._asked = set()


def _result(future: Future[T], pool: Executor) -> T:
    """A task's result; a pool that lost a worker is asked about every second, not waited on."""
    while True:
        try:
            return future.result(timeout=1.0)
        except FuturesTimeout:
            if _lost_a_worker(pool):
                raise BrokenExecutor("a worker died") from None


def _lost_a_worker(pool: Executor) -> bool:
    """Whether a process of a local pool has died: a worker killed while the pool starts another
    makes the start fail (ValueError, OSError) before the pool itself notices it is broken."""
    if getattr(pool, "_broken", False):  # ProcessPoolExecutor says so once it has noticed
        return True
    processes = getattr(pool, "_processes", None) or {}  # ProcessPoolExecutor's own record of its workers
    return any(p.exitcode not in (None, 0) for p in list(processes.values()))


def chunks(items: list[T], jobs: int, smallest: int = 4, largest: int = 64) -> list[tuple[T, ...]]:
    """Split work into ordered chunks: several per worker, so a slow one does not hold the rest."""
    if not items:
        return []
    size = max(smallest, min(largest, -(-len(items) // max(1, jobs * 4))))
    return [tuple(items[i : i + size]) for i in range(0, len(items), size)]
