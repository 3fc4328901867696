"""The read-only repository (miner.git.reader.Repo): lines followed between versions, and what a
failed git command means."""

from __future__ import annotations

from pathlib import Path

import pytest

from miner.core.errors import MissingObjectError, TransientGitError
from miner.git import Repo


def test_same_lines_maps_unchanged_lines_between_versions(tmp_path: Path) -> None:
    from test_messy import commit, git

    git(tmp_path, "init", "-q", "-b", "main")
    old = commit(tmp_path, {"a.py": b"one\ntwo\nthree\nfour\nfive\n"}, "Old", "2022-01-01T10:00:00Z")
    new = commit(tmp_path, {"a.py": b"zero\none\nTWO\nthree\nfive\nsix\n"}, "New", "2022-01-02T10:00:00Z")
    repo = Repo(tmp_path)
    assert repo.same_lines(new, old, "a.py", range(1, 7)) == {2: 1, 4: 3, 5: 5}
    assert repo.same_lines(new, old, "gone.py", [1]) == {}


def test_a_failure_of_the_run_is_never_a_missing_object(samples: dict) -> None:
    """Only objects the repository really lacks make a MissingObjectError (which a build may keep);
    a git killed by a signal, or one that says it cannot read what the store holds, fails the run."""
    repo = Repo(samples["shelf"].path)
    head = repo.resolve("HEAD")
    with pytest.raises(TransientGitError, match="signal 9"):
        repo._fail("blame", b"", -9)
    with pytest.raises(TransientGitError, match="holds what it names"):
        repo._fail("log", f"fatal: unable to read {head}".encode())
    with pytest.raises(MissingObjectError):
        repo._fail("log", b"fatal: unable to read " + b"0" * 39 + b"1")
