"""Blame from anchors gives exactly git blame's answer: on linear history, across a side branch
that forked before an anchor and merged after it, and across a rename; and a build that uses
anchors writes the same bytes as one that does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Sample, tree
from test_messy import commit, git, seeded_history

from miner.commands.build import BuildOptions, Workers, build
from miner.core.config import load_config
from miner.git import Repo
from miner.stages import anchors
from miner.stages.anchors import Anchor, Anchored, build_chain


def _lines(n: int, tag: str) -> bytes:
    return "".join(f"line {i} {tag}\n" for i in range(n)).encode()


@pytest.fixture
def branchy(tmp_path: Path) -> Path:
    """app.py edited on main, a side branch forked early and merged late, then a rename."""
    repo = tmp_path / "branchy"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    text = [f"value_{i} = {i}\n" for i in range(40)]
    commit(repo, {"app.py": "".join(text).encode()}, "Start", "2022-01-01T10:00:00Z")
    git(repo, "checkout", "-q", "-b", "side")
    side = list(text)
    side[35] = "value_35 = 'side'\n"
    commit(repo, {"app.py": "".join(side).encode()}, "Side change", "2022-01-02T10:00:00Z")
    git(repo, "checkout", "-q", "main")
    for day in range(3, 12):
        text[day] = f"value_{day} = 'day {day}'\n"
        commit(repo, {"app.py": "".join(text).encode()}, f"Edit {day}", f"2022-01-{day:02d}T10:00:00Z")
    git(repo, "merge", "-q", "--no-edit", "side", date="2022-01-12T10:00:00Z")
    for day in range(13, 18):
        text = (repo / "app.py").read_text().splitlines(keepends=True)
        text[day] = f"value_{day} = 'late {day}'\n"
        commit(repo, {"app.py": "".join(text).encode()}, f"Late {day}", f"2022-01-{day:02d}T10:00:00Z")
    git(repo, "mv", "app.py", "main.py")
    git(repo, "commit", "-q", "-m", "Rename", date="2022-01-20T10:00:00Z")
    text = (repo / "main.py").read_text().splitlines(keepends=True)
    text[20] = "value_20 = 'renamed'\n"
    commit(repo, {"main.py": "".join(text).encode()}, "After rename", "2022-01-21T10:00:00Z")
    return repo


def _count_anchor_hits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    used = [0]
    real = Anchor.hit

    def counting(self: Anchor, line: int, final_line: int):
        used[0] += 1
        return real(self, line, final_line)

    monkeypatch.setattr(Anchor, "hit", counting)
    return used


def _every_version(repo: Repo, path: str) -> list[str]:
    return [sha for sha in repo.run("rev-list", "HEAD", "--", path).decode().split()]


def _anchored(repo: Repo, where: Path, every: int) -> Anchored:
    """The branchy sample's two files anchored one every ``every`` commits, as a build's workers read them."""
    head = repo.resolve("HEAD")
    for path in ("app.py", "main.py"):
        anchors.save(where, path, build_chain(repo, head, path, every))
    return Anchored(repo, str(where))


@pytest.mark.parametrize("every", [1, 2, 3])
def test_anchored_blame_is_git_blame_at_every_version(
    branchy: Path, tmp_path: Path, every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(branchy)
    used = _count_anchor_hits(monkeypatch)
    history = _anchored(repo, tmp_path / "a", every)
    checked = 0
    for path in ("app.py", "main.py"):
        for sha in _every_version(repo, path) + repo.run("rev-list", "HEAD").decode().split():
            data = repo.blob(sha, path)
            if data is None:
                continue
            lines = range(1, data.count(b"\n") + 1)
            assert history.blame(sha, path, lines) == repo.blame(sha, path, lines), (sha, path)
            checked += 1
    assert checked > 20
    assert used[0] > 0, "no answer came from an anchor: the test would pass without them"


@pytest.mark.parametrize("every", [1, 2])
def test_anchored_blame_looking_through_commits_is_git_blame(
    branchy: Path, tmp_path: Path, every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--ignore-rev`` of the version itself (as prior_authors asks) and of an older commit (a
    reformat blame looks through): anchors serve the blame when the ignored commits are newer than
    them, and it is still exactly git's."""
    repo = Repo(branchy)
    used = _count_anchor_hits(monkeypatch)
    history = _anchored(repo, tmp_path / "a", every)
    checked = 0
    for path in ("app.py", "main.py"):
        versions = _every_version(repo, path)
        for n, sha in enumerate(versions):
            data = repo.blob(sha, path)
            if data is None:
                continue
            lines = range(1, data.count(b"\n") + 1)
            for ignore in [(sha,), (sha, *versions[n + 1 : n + 3])]:
                assert history.blame(sha, path, lines, ignore) == repo.blame(sha, path, lines, ignore), (sha, path, ignore)
                checked += 1
    assert checked > 20
    assert used[0] > 0, "no answer came from an anchor: the test would pass without them"


def test_the_side_branch_line_is_blamed_in_full(branchy: Path, tmp_path: Path) -> None:
    """Line 36 came from the side branch, which forked before every anchor: it stops at a boundary
    that is not the anchor, so it is blamed again in full, and lands on the side commit."""
    repo = Repo(branchy)
    head = repo.resolve("HEAD")
    anchors.save(tmp_path / "a", "main.py", build_chain(repo, head, "main.py", 2))
    (hit,) = Anchored(repo, str(tmp_path / "a")).blame(head, "main.py", [36])
    meta = repo.meta(hit.sha)
    assert meta is not None and meta.subject == "Side change"


def _anchor_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchor every file any fix changes, one every two commits: as many anchors as the samples allow."""
    monkeypatch.setattr(anchors, "hot_paths", lambda fixed, *_: sorted({p for paths in fixed for p in paths}))
    monkeypatch.setattr(anchors, "EVERY", 2)


def test_a_build_with_anchors_writes_the_same_bytes(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos = [s.path for s in samples.values()]
    build(repos, tmp_path / "plain", load_config(), progress=False)
    _anchor_everything(monkeypatch)
    used = _count_anchor_hits(monkeypatch)
    build(repos, tmp_path / "anchored", load_config(), BuildOptions(use_cache=False), progress=False)
    assert used[0] > 0
    assert _without_anchors(tree(tmp_path / "anchored")) == tree(tmp_path / "plain")


def test_anchors_reach_the_workers_of_every_engine(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anchors are chosen and written by the parent; a process pool and a Dask cluster read them."""
    distributed = pytest.importorskip("distributed")
    repos = [s.path for s in samples.values()]
    _anchor_everything(monkeypatch)
    build(repos, tmp_path / "inline", load_config(), progress=False)
    build(repos, tmp_path / "pool", load_config(), BuildOptions(workers=Workers(jobs=2)), progress=False)
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        dask = Workers(jobs=2, executor="dask", address=cluster.scheduler_address)
        build(repos, tmp_path / "dask", load_config(), BuildOptions(workers=dask), progress=False)
    expected = tree(tmp_path / "inline")
    assert any(name.endswith("anchors.jsonl") for name in expected)
    assert tree(tmp_path / "pool") == expected
    assert tree(tmp_path / "dask") == expected


def _without_anchors(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if not name.endswith("anchors.jsonl")}


def test_a_rebuild_blames_its_new_fixes_from_the_anchors_the_last_build_kept(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos = [s.path for s in samples.values()]
    build(repos, tmp_path / "plain", load_config(), progress=False)
    _anchor_everything(monkeypatch)
    build(repos, tmp_path / "out", load_config(), progress=False)
    kept = list((tmp_path / "out" / "cache").glob("*/anchors.jsonl"))
    assert kept
    # The rebuild labels from scratch (another labels key), builds no anchors, and starts from the kept ones.
    monkeypatch.setattr(anchors, "hot_paths", lambda *_: [])
    used = _count_anchor_hits(monkeypatch)
    config = load_config().with_overrides(labels={"max_cosmetic_hops": 2})
    build(repos, tmp_path / "plain2", config, progress=False)
    build(repos, tmp_path / "out", config, progress=False, force=True)
    assert used[0] > 0
    assert _without_anchors(tree(tmp_path / "out")) == _without_anchors(tree(tmp_path / "plain2"))


def test_an_anchor_at_a_commit_the_history_lacks_is_passed_over(branchy: Path, tmp_path: Path) -> None:
    repo = Repo(branchy)
    head = repo.resolve("HEAD")
    chain = build_chain(repo, head, "main.py", 2)
    stale = Anchor("0" * 40, chain[-1].shas, chain[-1].paths, chain[-1].sha_of, chain[-1].path_of, chain[-1].orig)
    anchors.save(tmp_path / "a", "main.py", [*chain, stale])
    lines = range(1, 41)
    assert Anchored(repo, str(tmp_path / "a")).blame(head, "main.py", lines) == repo.blame(head, "main.py", lines)


@pytest.mark.parametrize("walk", [1, 256])
def test_ancestry_read_off_the_first_parent_chain_is_libgit2s(tmp_path: Path, walk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchored answers whether a commit is below another from the head's first-parent chain where
    it can: the same answer as libgit2 for every pair of commits of a seeded history of branches,
    merges and dates that go backwards (the chain is asked about its own commits; a commit off it
    walks all its parents to the chain, or, past ``walk`` commits, libgit2 is asked)."""
    monkeypatch.setattr(anchors, "_WALK_TO_MAINLINE", walk)
    asked: list[tuple[str, str]] = []
    real = Repo.is_ancestor

    def counted(self: Repo, a: str, b: str) -> bool:
        asked.append((a, b))
        return real(self, a, b)

    monkeypatch.setattr(Repo, "is_ancestor", counted)
    repo = tmp_path / "repo"
    repo.mkdir()
    made = seeded_history(repo, 5)
    r = Repo(repo)
    head = r.resolve("HEAD")
    anchors.save_mainline(tmp_path / "anchors", r, head)
    anchored = Anchored(r, str(tmp_path / "anchors"))
    every = sorted(set(made) | set(git(repo, "rev-list", "--all").split()))
    chain = set(git(repo, "rev-list", "--first-parent", head).split())
    assert 5 < len(chain) < len(every)
    for a in every:
        for b in every:
            assert anchored._is_ancestor(a, b) == r.is_ancestor(a, b), (a, b)
    # Each pair asks libgit2 once for the expected answer; the chain answered some of the rest itself,
    # all it could when the walk is long enough.
    pairs = len(every) ** 2
    assert pairs < len(asked) < 2 * pairs
    if walk > len(every):
        assert len(asked) == pairs + sum(1 for a in every if a not in chain) * len(every)
