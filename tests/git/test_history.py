"""PathHistory answers what ``git log --no-merges --until=T head ^sha -- paths`` lists without running
git: checked against git itself on a seeded history of branches, merges that take one side or
neither, octopus merges, renames, deletions, a file that becomes a directory, and dates that go
backwards."""

from __future__ import annotations

from pathlib import Path

from test_messy import FILES, seeded_history

from miner.core.records import CommitMeta
from miner.git.history import PathHistory
from miner.git.reader import Repo


def test_the_commits_listed_are_those_git_lists(tmp_path: Path) -> None:
    """For every commit of three seeded histories and several sets of paths (one file, two, a
    directory, a path that became a directory), with a window that cuts some commits off: the
    same commits as ``git log``, or None (ask git), and None only rarely."""
    asked = answered = 0
    for seed in (1, 2, 3):
        repo = tmp_path / f"r{seed}"
        repo.mkdir()
        seeded_history(repo, seed)
        r = Repo(repo)
        head = r.resolve("HEAD")
        commits = {m.sha: m for m in r.commits(head)}
        history = PathHistory(r, head, commits)
        for sha, meta in sorted(commits.items()):
            for paths in (["a.py"], ["b.py", "d/c.py"], ["d"], ["f.txt"], ["a.py.moved", "d/e.py"]):
                until = meta.committer_time + 20 * 3600
                asked += 1
                listed = history.listed(sha, paths, until)
                if listed is None:
                    continue
                answered += 1
                expected = sorted(r.later_commits(sha, head, paths, until), key=lambda m: (m.committer_time, m.sha))
                assert [m.sha for m in listed] == [m.sha for m in expected], (seed, sha, paths)
    assert answered >= 0.95 * asked


def test_only_wanted_commits_are_listed_and_an_unknown_commit_gives_no_answer(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    seeded_history(repo, 4)
    r = Repo(repo)
    head = r.resolve("HEAD")
    commits = {m.sha: m for m in r.commits(head)}
    root = next(sha for sha, m in commits.items() if not m.parents)
    later = r.later_commits(root, head, list(FILES), 2**40)
    assert later

    def even(meta: CommitMeta) -> bool:
        return int(meta.sha[-1], 16) % 2 == 0

    kept = PathHistory(r, head, commits, even).listed(root, FILES, 2**40)
    assert kept is not None and [m.sha for m in kept] == [
        m.sha for m in sorted(later, key=lambda m: (m.committer_time, m.sha)) if even(m)
    ]
    # The walk's records lack a commit git would list: no answer rather than a wrong one.
    lacking = {sha: m for sha, m in commits.items() if sha != later[-1].sha}
    assert PathHistory(r, head, lacking).listed(root, FILES, 2**40) is None
