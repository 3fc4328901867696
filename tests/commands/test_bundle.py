"""Bundles that share history: where the history is cut, that a consumer's script rebuilds what
`miner materialize` makes, and that no bundle a fixture needs holds anything later than it."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

import miner
from miner.commands.audit import audit
from miner.commands.bundle import folders, plan, ranges
from miner.commands.export import export
from miner.commands.materialize import materialize
from miner.core.config import load_config


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def objects(repo: Path) -> dict[str, str]:
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    return dict(line.split() for line in out.splitlines())


def files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts}


def needs(export_dir: Path, fixture_id: str) -> list[Path]:
    """The bundles a consumer applies for a fixture, in order: its history, then its own."""
    listed = []
    for line in (export_dir / "bundles" / f"{fixture_id}.needs").read_text().splitlines():
        folder, first, last = line.split()
        listed += [export_dir / folder / f"{n}.bundle" for n in range(int(first), int(last) + 1)]
    return [*listed, export_dir / "bundles" / f"{fixture_id}.bundle"]


# -- where the history is cut ------------------------------------------------------------------------


def ancestry(graph: list[tuple[str, list[str]]]) -> dict[str, set[str]]:
    below: dict[str, set[str]] = {}
    for sha, parents in graph:
        below[sha] = {sha}.union(*(below[p] for p in parents))
    return below


def segment(graph: list[tuple[str, list[str]]], cut_plan: miner.commands.bundle.HistoryPlan, i: int) -> set[str]:
    below = ancestry(graph)
    cut = cut_plan.cuts[i]
    return below[cut.commit] - set().union(*(below[cut_plan.cuts[j].commit] for j in cut.stands_on))


def test_a_linear_history_is_a_chain_cut_at_each_base() -> None:
    graph = [("a", []), ("b", ["a"]), ("c", ["b"]), ("d", ["c"]), ("e", ["d"])]
    cut = plan(graph, ["a", "b", "c", "d", "e"], ["d", "b"])
    assert [(c.commit, c.stands_on) for c in cut.cuts] == [("b", ()), ("d", (0,))]
    assert cut.needs == {"b": (0,), "d": (0, 1)}
    assert [segment(graph, cut, i) for i in range(2)] == [{"a", "b"}, {"c", "d"}]


def test_a_side_branch_base_needs_no_newer_mainline_and_shares_the_older() -> None:
    """x2 is on a branch forked at m2 and merged at m4; y1 forks from m3. m3's reviewer must not get
    x2 (older than m3 in time, maybe, but not its ancestor); both branches share m2's bundle."""
    graph = [
        ("m1", []),
        ("m2", ["m1"]),
        ("x1", ["m2"]),
        ("x2", ["x1"]),
        ("m3", ["m2"]),
        ("y1", ["m3"]),
        ("m4", ["m3", "x2"]),
        ("m5", ["m4"]),
    ]
    cut = plan(graph, ["m1", "m2", "m3", "m4", "m5"], ["x2", "m3", "y1"])
    assert [(c.commit, c.stands_on) for c in cut.cuts] == [("m2", ()), ("x2", (0,)), ("m3", (0,)), ("y1", (2,))]
    assert cut.needs == {"x2": (0, 1), "m3": (0, 2), "y1": (0, 2, 3)}
    assert segment(graph, cut, 1) == {"x1", "x2"} and segment(graph, cut, 2) == {"m3"}


def test_any_history_each_base_gets_exactly_its_ancestors() -> None:
    rng = random.Random(7)
    for _ in range(40):
        graph: list[tuple[str, list[str]]] = [("c0", [])]
        for n in range(1, 60):
            earlier = [sha for sha, _ in graph]
            parents = [earlier[-1] if rng.random() < 0.6 else rng.choice(earlier)]
            if rng.random() < 0.2:
                parents.append(rng.choice(earlier))
            graph.append((f"c{n}", sorted(set(parents), key=parents.index)))
        mainline: list[str] = []
        sha = graph[-1][0]
        parents_of = dict(graph)
        while True:
            mainline.insert(0, sha)
            if not parents_of[sha]:
                break
            sha = parents_of[sha][0]
        bases = rng.sample([s for s, _ in graph], 12)
        cut = plan(graph, mainline, bases)
        below = ancestry(graph)
        segments = [segment(graph, cut, i) for i in range(len(cut.cuts))]
        for i, c in enumerate(cut.cuts):
            assert all(j < i for j in c.stands_on)  # numbered in an order that applies
        for base in bases:
            applied = [segments[i] for i in cut.needs[base]]
            assert set().union(*applied) == below[base]  # all of its past, nothing else
            assert all(below[cut.cuts[i].commit] <= below[base] for i in cut.needs[base])


def test_ranges_and_folders() -> None:
    assert ranges([0, 1, 2, 5, 6, 9]) == [(0, 2), (5, 6), (9, 9)]
    assert ranges([]) == []
    assert folders(["a/b", "a b", "..", "drgn"]) == {"..": "repository", "a b": "a_b", "a/b": "a_b-2", "drgn": "drgn"}


# -- what a consumer gets --------------------------------------------------------------------------


@pytest.mark.parametrize("squash", [False, True], ids=["history", "squash"])
def test_the_script_rebuilds_every_fixture_as_materialize_makes_it(
    default_build: Path, samples: dict, tmp_path: Path, squash: bool
) -> None:
    """Every fixture from the history bundles, every other one through a cache that the rebuilds
    share; with --squash (one bundle each, no history: simpler) the first fixture of each repository."""
    fixtures = miner.open_output(default_build)
    repos = {name: samples[name].path for name in sorted({f.answer.repository for f in fixtures})}
    assert len(repos) > 1  # the history of each is cut on its own
    export(default_build, "bundle", tmp_path / "x", repos=list(repos.values()), squash=squash)
    assert (tmp_path / "x" / "history").is_dir() != squash
    chosen = list(fixtures) if not squash else [next(f for f in fixtures if f.answer.repository == r) for r in repos]
    rebuilt = []
    for n, f in enumerate(chosen):
        made = materialize(default_build, f.id, tmp_path / "m" / f.id, repos[f.answer.repository], squash=squash)
        to = tmp_path / "r" / f.id
        cache = [str(tmp_path / "cache")] if n % 2 else []
        subprocess.run(["sh", str(tmp_path / "x" / "materialize.sh"), f.id, str(to), *cache], check=True, capture_output=True)
        assert git(to, "for-each-ref", "--format=%(refname) %(objectname)") == (
            f"refs/heads/base {made.base}\nrefs/heads/pr {made.pr}\n"
        )
        assert objects(to) == objects(made.path), f.id  # the same history, commit for commit
        assert files(to) == files(made.path) and git(to, "status", "--porcelain") == "", f.id
        assert not (to / ".git" / "logs").exists() and not (to / ".git" / "refs" / "applied").exists()
        rebuilt.append(to)
    if not squash:  # the cache holds only what the rebuilds through it needed, under its own refs
        assert git(tmp_path / "cache", "for-each-ref", "--format=%(refname)", "--count=1").startswith("refs/cuts/history/")
    report = audit(default_build, load_config(), list(repos.values()), rebuilt)
    assert report.ok, report.text()
    assert report.checked["materialized"] == len(chosen)


def test_a_fixtures_bundles_verify_in_order_and_hold_nothing_later_than_it(
    full_build: dict[str, Path], samples: dict, tmp_path: Path
) -> None:
    """Applied in the order listed, each bundle verifies; what they hold together is the base's
    history and the pr commit, nothing else. Every bundle of the history together would leak."""
    later_in_all = 0
    for name in ("gokv", "pyledger"):  # each has a fixture whose base is on a side branch
        out, repo = full_build[name], samples[name].path
        fixtures = miner.open_output(out)
        mainline = set(git(repo, "rev-list", "--first-parent", "HEAD").split())
        assert any(f.answer.base not in mainline for f in fixtures)
        export(out, "bundle", tmp_path / name, repo=repo)
        tips = [git(repo, "bundle", "list-heads", str(b)).split()[0] for b in (tmp_path / name / "history").rglob("*.bundle")]
        in_all_history = set(git(repo, "rev-list", *tips).split())
        for f in fixtures:
            store = tmp_path / "stores" / f.id
            git(tmp_path, "init", "-q", str(store))
            for n, bundle in enumerate(needs(tmp_path / name, f.id)):
                git(store, "bundle", "verify", "-q", str(bundle))
                head = git(store, "bundle", "unbundle", str(bundle)).split()[0]
                git(store, "update-ref", f"refs/applied/{n}", head)
            pr = git(store, "bundle", "list-heads", str(needs(tmp_path / name, f.id)[-1]), "refs/heads/pr").split()[0]
            held = objects(store)
            past = set(git(repo, "rev-list", f.answer.base).split()) if f.answer.base else set()
            commits = {oid for oid, kind in held.items() if kind == "commit"}
            assert commits - past - {pr, git(store, "rev-parse", f"{pr}^").strip()} == set(), f.id
            assert f.answer.head not in commits and not {d.fix for d in f.answer.defects or ()} & commits
            reachable = {line.split()[0] for line in git(store, "rev-list", "--objects", pr).splitlines()}
            assert set(held) <= reachable, f.id  # nothing but the pr commit and what it reaches
            later_in_all += bool(in_all_history - past)
    assert later_in_all  # every history bundle applied would have leaked: the lists keep it out


def test_squash_is_for_bundles(default_build: Path, tmp_path: Path) -> None:
    with pytest.raises(miner.MinerError, match="--squash is for --format bundle"):
        export(default_build, "jsonl", tmp_path / "j", squash=True)
