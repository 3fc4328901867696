"""The read-only repository (miner.git.reader.Repo): lines followed between versions, and what a
failed git command means."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from miner.core.errors import MinerError, MissingObjectError, TransientGitError
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


@pytest.mark.parametrize("seed", [3, 4])
def test_a_walk_split_between_git_processes_gives_the_same_records_in_the_same_order(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history with branches, merges, renames and deletions, walked by one git log and by three
    at once (each on a stretch of rev-list's order), in full and from an excluded head."""
    from test_messy import seeded_history

    from miner.git import reader

    path = tmp_path / "r"
    path.mkdir()
    made = seeded_history(path, seed)
    repo = Repo(path)
    monkeypatch.setattr(reader, "_SPLIT_WALK_LEAST", 1)
    whole = list(repo.commits("HEAD"))
    assert len(whole) > 30
    assert list(repo.commits("HEAD", split=3)) == whole
    middle = [made[len(made) // 2]]
    assert list(repo.commits("HEAD", exclude=middle, split=3)) == list(repo.commits("HEAD", exclude=middle))


def test_a_split_walk_hands_out_stretches_and_says_a_failed_one_after_the_records_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk is cut in more stretches than git processes (the cost of a history is uneven); the
    records come in rev-list's order, and a stretch git fails on is raised once those before it are read."""
    from test_messy import seeded_history

    from miner.git import reader

    path = tmp_path / "r"
    path.mkdir()
    seeded_history(path, 3)
    repo = Repo(path)
    monkeypatch.setattr(reader, "_SPLIT_WALK_LEAST", 1)
    whole = list(repo.commits("HEAD"))
    started: list[int] = []
    stream = Repo._stream

    def failing_third(self: Repo, *args: str, stdin: bytes | None = None) -> Iterator[bytes]:
        started.append(len(started))
        if stdin is not None and stdin.split(b"\n", 1)[0].decode() == third:
            raise MinerError("git log failed: stretch three")
        yield from stream(self, *args, stdin=stdin)

    size = -(-len(whole) // (2 * reader._STRETCHES_PER_PROCESS))
    third = repo.run("rev-list", "--no-merges", "HEAD").decode().split()[2 * size]
    monkeypatch.setattr(Repo, "_stream", failing_third)
    got: list[str] = []
    with pytest.raises(MinerError, match="stretch three"):
        for meta in repo.commits("HEAD", split=2):
            got.append(meta.sha)
    assert got == [m.sha for m in whole[: 2 * size]]
    assert len(started) > 2  # more stretches than processes


def test_blame_back_to_the_revision_itself_stops_every_line_there_as_at_an_older_base(samples: dict) -> None:
    """rev..rev names no commit to start from (git would blame a working tree): every line is as old as
    the base, so it stops at it, as git stops lines at a base the revision descends from."""
    shelf = samples["shelf"]
    repo = Repo(shelf.path)
    base, later = shelf.sha("import"), shelf.sha("inclusive-end")
    older = repo.blame_from(later, base, "shelf/ranges.py", [1, 4, 5])  # base is older than the boundary: git answers
    assert older == repo.blame_from(base, base, "shelf/ranges.py", [1, 4, 5])
    hits, boundary = repo.blame_from(base, base, "shelf/ranges.py", None)
    assert boundary == {base} and [h.final_line for h in hits] == list(range(1, len(hits) + 1))
    data = repo.blob(base, "shelf/ranges.py")
    assert data is not None and len(hits) == len(data.splitlines())
    with pytest.raises(MinerError, match="has only"):
        repo.blame_from(base, base, "shelf/ranges.py", [999])


def test_a_commit_is_cosmetic_only_when_it_changes_whitespace_and_blank_lines_alone(tmp_path: Path) -> None:
    """``is_cosmetic`` reads the commit's record first and answers from it when a line was removed and
    not added back; every answer must be the one the whitespace-blind diff alone gives."""
    from test_messy import commit, git

    git(tmp_path, "init", "-q", "-b", "main")
    base = "def f(a):\n    return a\n\n\ndef g(b):\n    return b\n"
    shas = {
        "first": commit(tmp_path, {"a.py": base.encode()}, "First", "2022-01-01T10:00:00Z"),
        "reindent": commit(
            tmp_path, {"a.py": base.replace("    ", "\t").replace("\n\n\n", "\n\n\n\n").encode()}, "Tabs", "2022-01-02T10:00:00Z"
        ),
        "code": commit(tmp_path, {"a.py": base.replace("return a", "return a + 1").encode()}, "Code", "2022-01-03T10:00:00Z"),
        "moved": commit(
            tmp_path,
            {"a.py": "def g(b):\n    return b\n\n\ndef f(a):\n    return a + 1\n".encode()},
            "Move",
            "2022-01-04T10:00:00Z",
        ),
    }
    expected = {"first": False, "reindent": True, "code": False, "moved": False}
    for name, sha in shas.items():
        assert Repo(tmp_path).is_cosmetic(sha) == Repo(tmp_path)._is_cosmetic(sha) == expected[name], name
        repo = Repo(tmp_path)
        repo.meta(sha)  # the record first, as blame reads it
        assert repo.is_cosmetic(sha) == expected[name], name


@pytest.mark.parametrize("seed", [3, 4])
def test_diffs_read_ahead_in_one_batch_are_the_diffs_read_one_by_one(tmp_path: Path, seed: int) -> None:
    """``read_ahead`` reads many commits' patches and changes with one git each; every answer it gives
    is the bytes and entries a call of its own gives, renames, deletions and empty commits included."""
    from test_messy import seeded_history

    path = tmp_path / "r"
    path.mkdir()
    made = seeded_history(path, seed)
    repo = Repo(path)
    heads = [sha for sha in dict.fromkeys(made) if len(repo.parents(sha)) <= 1]
    batched: list[tuple[bytes, list[tuple[str, str | None, str | None]]]] = []
    for i in range(0, len(heads), 7):
        repo.read_ahead(heads[i : i + 7])
        assert len(repo._read_ahead) == 2 * sum(1 for h in heads[i : i + 7] if repo.parents(h)), "all but the root read ahead"
        batched += [(repo.patch(repo.first_parent(h), h), repo.changes(repo.first_parent(h), h)) for h in heads[i : i + 7]]
        assert not repo._read_ahead, "each answer is given once"
    single = [(repo.patch(repo.first_parent(h), h), repo.changes(repo.first_parent(h), h)) for h in heads]
    assert batched == single
    assert any(not p for p, _ in single) and any(s == "R" for _, c in single for s, _, _ in c), "an empty commit and a rename"


def test_a_batch_that_cannot_be_read_leaves_each_diff_to_its_own_call(samples: dict) -> None:
    repo = Repo(samples["shelf"].path)
    head = repo.resolve("HEAD")
    repo.read_ahead([head, "0" * 40])  # a commit the repository lacks is left out, not a failure
    assert set(repo._read_ahead) == {("patch", repo.first_parent(head), head), ("changes", repo.first_parent(head), head)}
    parent = repo.first_parent(head)
    assert parent is not None
    repo._read_ahead[("patch", parent, head)] = b"stale"
    assert repo.patch(parent, head, ["a.py"]) != b"stale", "a patch of some paths is never read ahead"
