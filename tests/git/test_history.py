"""PathHistory answers what ``git log --no-merges --until=T head ^sha -- paths`` lists without running
git: checked against git itself on a seeded history of branches, merges that take one side or
neither, octopus merges, renames, deletions, a file that becomes a directory, and dates that go
backwards."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from test_messy import git

from miner.core.records import CommitMeta
from miner.git.history import PathHistory
from miner.git.reader import Repo

FILES = ("a.py", "b.py", "d/c.py", "d/e.py", "f.txt")


def _write(repo: Path, rng: random.Random, step: int) -> None:
    """Change one or two files: new text, an old text again (so merges can equal a parent), a
    deletion, a rename, or a file turned into a directory."""
    for name in rng.sample(FILES, rng.randint(1, 2)):
        target = repo / name
        roll = rng.random()
        if roll < 0.1 and target.is_file():
            target.unlink()
        elif roll < 0.18 and target.is_file():
            target.rename(repo / (name + ".moved"))
        elif roll < 0.22 and target.is_file() and name == "f.txt":
            target.unlink()
            (repo / "f.txt").mkdir()
            (repo / "f.txt" / "inside.py").write_text(f"inside {step}\n")
        elif not (repo / name).is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"{name} {rng.choice([step, 0, 1])}\n")


def seeded_history(repo: Path, seed: int) -> list[str]:
    """A history of about 90 steps on several branches; returns every commit made."""
    rng = random.Random(seed)
    git(repo, "init", "-q", "-b", "main")
    made: list[str] = []
    branches = ["main"]
    hour = 0

    def when() -> str:
        nonlocal hour
        hour += 1 if rng.random() > 0.08 else -30  # now and then a commit dated before its parent
        return f"@{1704067200 + hour * 3600} +0000"

    for step in range(90):
        roll = rng.random()
        branch = rng.choice(branches)
        if made:
            git(repo, "checkout", "-q", "-f", branch)
            git(repo, "clean", "-q", "-fd")
        if roll < 0.55 or not made:
            _write(repo, rng, step)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"Change {step}", date=when())
        elif roll < 0.7:
            name = f"b{step}"
            git(repo, "checkout", "-q", "-f", "-b", name, rng.choice(made))
            branches.append(name)
            continue
        else:
            others = [b for b in branches if b != branch]
            if not others:
                continue
            theirs = rng.sample(others, 2 if roll > 0.95 and len(others) > 1 else 1)
            how = rng.choice([["-X", "theirs"], ["-s", "ours"], ["-X", "ours"]]) if len(theirs) == 1 else []
            if not _merge(repo, [*how, "-m", f"Merge {step}", *theirs], when()):
                continue
        made.append(git(repo, "rev-parse", "HEAD").strip())
    git(repo, "checkout", "-q", "-f", "main")
    for branch in branches[1:]:
        _merge(repo, ["-X", "theirs", "-m", f"Merge {branch}", branch], when())
    return made


def _merge(repo: Path, args: list[str], date: str) -> bool:
    """Merge, or give up on a conflict the strategy cannot settle (leaving the branch as it was)."""
    try:
        git(repo, "merge", "-q", "--no-ff", *args, date=date)
        return True
    except subprocess.CalledProcessError:
        git(repo, "reset", "-q", "--merge")
        git(repo, "reset", "-q", "--hard")
        return False


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
