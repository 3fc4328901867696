"""Every engine gives the same bytes: inline, a process pool, and Dask (in-process and real processes)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from conftest import Sample, tree

from miner.commands.build import BuildOptions, Workers, build
from miner.core.config import load_config

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def reference(samples: dict[str, Sample], tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], dict[str, bytes]]:
    repos = [s.path for s in samples.values()]
    out = tmp_path_factory.mktemp("ref") / "out"
    build(repos, out, load_config(), BuildOptions(workers=Workers(jobs=1)), progress=False)
    return repos, tree(out)


def test_two_processes_give_the_same_bytes(reference: tuple[list[Path], dict[str, bytes]], tmp_path: Path) -> None:
    repos, expected = reference
    build(repos, tmp_path / "out", load_config(), BuildOptions(workers=Workers(jobs=2)), progress=False)
    assert tree(tmp_path / "out") == expected


def test_dask_in_process_cluster_gives_the_same_bytes(reference: tuple[list[Path], dict[str, bytes]], tmp_path: Path) -> None:
    repos, expected = reference
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        dask = Workers(jobs=2, executor="dask", address=cluster.scheduler_address)
        build(repos, tmp_path / "out", load_config(), BuildOptions(workers=dask), progress=False)
    assert tree(tmp_path / "out") == expected


def test_dask_survives_a_worker_killed_mid_task(
    reference: tuple[list[Path], dict[str, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real cluster of separate processes; one worker dies while running a task; the build is still right."""
    repos, expected = reference
    monkeypatch.setenv("MINER_TASK_DELAY", "1.0")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        killed: list[int] = []

        def kill_a_busy_worker() -> None:
            deadline = time.time() + 60
            while time.time() < deadline and not killed:
                busy = [w for w, tasks in client.processing().items() if tasks]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, 9)
                    killed.append(pid)
                time.sleep(0.1)

        killer = threading.Thread(target=kill_a_busy_worker)
        killer.start()
        dask = Workers(jobs=2, executor="dask", address=cluster.scheduler_address)
        build(repos, tmp_path / "out", load_config(), BuildOptions(workers=dask), progress=False)
        killer.join()
    assert killed, "no worker was killed: the test did not test anything"
    assert tree(tmp_path / "out") == expected


def test_lookahead_answers_as_fn_would_and_runs_only_a_few_ahead() -> None:
    """A sequential choice over a plan: items skipped are not waited for, an item asked for later is
    answered from the work already done, and nothing runs more than ``ahead`` past what was asked."""
    from concurrent.futures import ThreadPoolExecutor

    from miner.runner.engine import Lookahead

    ran: list[int] = []
    asked: list[int] = []
    lock = threading.Lock()

    def square(n: int) -> int:
        with lock:
            ran.append(n)
        return n * n

    def args(n: int) -> tuple[int]:
        asked.append(n)
        return (n,)

    with ThreadPoolExecutor(2) as pool:
        ahead: Lookahead[int, int] = Lookahead(pool, square, 2, args)
        ahead.plan(list(range(10)))
        assert ahead.get(0) == 0
        assert ahead.get(5) == 25  # 1-4 skipped
        assert ahead.get(2) == 4  # asked after all: run then, or taken from what ran ahead
        assert ahead.get(42) == 1764  # not in the plan
        ahead.close()
    assert max(n for n in ran if n != 42) <= 7  # 5 was asked with two ahead of it
    assert ran.count(2) == 1 and ran.count(5) == 1
    assert sorted(asked) == sorted(set(asked)) and max(n for n in asked if n != 42) <= 7  # made once, only when sent


_STARTS_INTERRUPTED = """
import multiprocessing.util, os, signal
from miner.runner.engine import make_executor

def stop(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)
spawn = multiprocessing.util.spawnv_passfds

def spawn_then_terminated(path, args, passfds):
    pid = spawn(path, args, passfds)
    if any(b"spawn_main" in os.fsencode(a) for a in args):  # a worker, not the resource tracker
        os.kill(os.getpid(), signal.SIGTERM)  # lands after the worker exists, before it has its start-up data
    return pid

multiprocessing.util.spawnv_passfds = spawn_then_terminated
pool, shutdown = make_executor("local", 2, None, None)
try:
    pool.submit(abs, -1).result()
except KeyboardInterrupt:
    print("interrupted")
finally:
    shutdown()
"""


def test_a_signal_while_a_worker_starts_interrupts_the_parent_and_leaves_no_worker_to_complain() -> None:
    """SIGTERM between spawning a worker and handing it its start-up data: the worker must neither
    die in Python's bootstrap with a traceback nor outlive the parent (the captured stderr closes only
    when every process holding it has exited)."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-c", _STARTS_INTERRUPTED], capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "interrupted"
    assert "Traceback" not in ran.stderr, ran.stderr


_RECORDED_NOT_WAITED = """
import gc, time
from miner.runner.engine import make_executor

if __name__ == "__main__":
    pool, shutdown = make_executor("local", 2, None, None)
    with pool._shutdown_lock:
        pool._adjust_process_count()  # what submit does before it starts the manager thread
    let_go = pool.shutdown

    def slow_shutdown(*args, **kwargs):
        let_go(*args, **kwargs)
        gc.collect()  # the queues and their semaphores go now
        time.sleep(2)  # time for a worker still starting to reach them

    pool.shutdown = slow_shutdown
    shutdown()
    print("stopped")
"""


def test_a_signal_before_the_pools_manager_thread_starts_leaves_no_worker_to_complain(tmp_path: Path) -> None:
    """A signal inside submit, after a worker is recorded and before the manager thread (the only one
    that waits for workers) starts: the worker is stopped before the pool lets its queues go, so it
    never fails in Python's bootstrap with a traceback."""
    import subprocess
    import sys

    script = tmp_path / "recorded.py"  # a file, not -c: a spawned worker imports the main module
    script.write_text(_RECORDED_NOT_WAITED)
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "stopped"
    assert "Traceback" not in ran.stderr, ran.stderr


_THREAD_MADE_NOT_STARTED = """
from concurrent.futures.process import _ExecutorManagerThread
from miner.runner.engine import make_executor

if __name__ == "__main__":
    pool, shutdown = make_executor("local", 2, None, None)
    with pool._shutdown_lock:
        pool._adjust_process_count()
        pool._executor_manager_thread = _ExecutorManagerThread(pool)  # a signal before its start()
    shutdown()
    print("stopped")
"""


def test_a_signal_between_making_the_manager_thread_and_starting_it_leaves_no_worker_to_complain(tmp_path: Path) -> None:
    """A signal inside submit, after the pool made its manager thread and before it started it: shutdown
    cannot join that thread (RuntimeError), and the worker still starting must be stopped all the same,
    or it fails in Python's bootstrap with a traceback (seen once in the interruption test, SIGINT 1.1 s
    into a build)."""
    import subprocess
    import sys

    script = tmp_path / "unstarted.py"
    script.write_text(_THREAD_MADE_NOT_STARTED)
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "stopped", ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr


def test_the_pools_bookkeeping_thread_prints_no_traceback_but_other_threads_do(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11's pool thread can fail after a worker dies (the build says so in one line); no
    traceback of it may reach the user. Any other thread's error is still printed."""
    from miner.runner.engine import make_executor

    monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
    pool, stop = make_executor("local", 2)
    stop()
    manager = type("_ExecutorManagerThread", (threading.Thread,), {"__module__": "concurrent.futures.process"})

    def fail() -> None:
        raise RuntimeError("dictionary changed size during iteration")

    for kind in (manager, threading.Thread):
        thread = kind(target=fail)
        thread.start()
        thread.join()
    err = capsys.readouterr().err
    assert err.count("Exception in thread") == 1 and "Traceback" in err


def test_a_worker_lost_while_the_next_one_starts_is_said_in_one_line() -> None:
    """A worker killed while the pool starts the next one makes that start fail (OSError "handle is
    closed") before any task is out: the build says a worker was lost, as it does for a task, instead of
    a traceback; the same error from a pool that lost nothing is not turned into that."""
    from concurrent.futures import Future, ProcessPoolExecutor

    from miner.core.errors import WorkerLostError
    from miner.runner.engine import start_workers

    class Failing(ProcessPoolExecutor):
        broken_by_then = True

        def submit(self, *args: object, **kwargs: object) -> "Future[object]":  # type: ignore[override]
            if self.broken_by_then:
                self._broken = "A process in the process pool was terminated abruptly"  # type: ignore[assignment]
            raise OSError("handle is closed")

    lost = Failing(max_workers=1)
    with pytest.raises(WorkerLostError, match="run the same command again to resume"):
        start_workers(lost, 2)
    healthy = Failing(max_workers=1)
    healthy.broken_by_then = False
    with pytest.raises(OSError, match="handle is closed"):
        start_workers(healthy, 2)
    for pool in (lost, healthy):
        pool.shutdown()
