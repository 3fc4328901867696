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
