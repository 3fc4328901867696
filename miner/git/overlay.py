"""The commit-graph overlay: a commit-graph with changed-path filters that miner writes outside the
repository it mines, in an object directory of its own that names the repository's objects as an
alternate. git reads the graph from there (blame and path-limited logs run about 1.5x faster);
every object is still read from the repository, and nothing is written to it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from miner.git.env import GIT_CONFIG, git_env
from miner.git.reader import Repo


def write_overlay(git_dir: Path, where: Path, seed: Path | None = None) -> str | None:
    """Write a commit-graph with changed-path filters for the repository at ``git_dir`` into ``where``.

    ``seed`` is the graph chain an earlier build wrote (``overlay_graphs``): git then only adds a
    layer for the commits it lacks. Returns the overlay to give to ``Repo(..., overlay=)``, or None
    if git cannot.
    """
    objects = where / "objects"
    graphs = objects / "info" / "commit-graphs"
    for attempt in ([seed] if seed is not None else []) + [None]:
        shutil.rmtree(objects, ignore_errors=True)
        (objects / "info").mkdir(parents=True)
        if attempt is not None:
            try:
                shutil.copytree(attempt, graphs)
            except OSError:
                continue  # an unreadable chain: write a fresh graph
        env = {**git_env(), "GIT_OBJECT_DIRECTORY": str(objects), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git_dir / "objects")}
        write = ["commit-graph", "write", "--reachable", "--changed-paths", "--split"]
        proc = subprocess.run(["git", f"--git-dir={git_dir}", *GIT_CONFIG, *write], capture_output=True, env=env)
        if proc.returncode == 0 and _has_graph(objects):
            return str(objects)
    return None


def overlay_graphs(overlay: str) -> Path:
    """Where an overlay keeps its commit-graph chain (what ``write_overlay`` takes as ``seed``)."""
    return Path(overlay) / "info" / "commit-graphs"


def _has_graph(objects: Path) -> bool:
    return (objects / "info" / "commit-graph").is_file() or (objects / "info" / "commit-graphs" / "commit-graph-chain").is_file()


def with_overlay(repo: Repo, where: Path, seed: Path | None) -> Repo:
    """The repository, reading a commit-graph that miner wrote outside it (blame runs faster),
    extended from the one the last build kept when there is one."""
    overlay = write_overlay(repo.git_dir, where, seed)
    return Repo(repo.git_dir, repo.exclude, overlay) if overlay else repo
