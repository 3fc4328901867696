"""``miner export --format bundle``: git bundles that share each repository's history and hold nothing
from a fixture's future.

One bundle of a repository's whole history cannot be shared: a reviewer of an early fixture would
find the later fixtures' changes, and their fixes, in it. So the history is cut at every fixture's
base (and where each base leaves the mainline, so that fixtures on side branches share the mainline
below them): cut ``n``'s bundle holds what its commit reaches that no earlier cut it descends from
reaches, and those cuts' commits are its prerequisites. A fixture needs the bundles of the cuts its
base descends from, and of no other: every commit in them is an ancestor of its base. Most commits
are in one bundle; a commit two side branches share below their bases, when it is not on the mainline,
is in both of theirs, and an object that left the tree and came back may be in two. On drgn (linear)
all bundles together are 0.88 of one bundle of the whole history, on runc (merged pull requests) 0.79.

What the export holds:

- ``history/<repository>/<n>.bundle``: the cuts, numbered in an order that applies (parents first);
- ``bundles/<id>.bundle``: the fixture's ``pr`` commit on top of its base (a thin bundle, whose
  prerequisite is the base); with ``--squash``, or for a change that made the first commit, the base
  as one commit with no history and ``pr`` on it, needing nothing else;
- ``bundles/<id>.needs``: the history bundles to apply first, in order, as lines of
  ``<folder> <first> <last>`` (an inclusive range of numbers), empty when none are needed;
- ``materialize.sh``: applies them with plain git and leaves what ``miner materialize`` makes.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from miner.commands.materialize import add_change, needed
from miner.core.errors import MinerError
from miner.core.output import Manifest
from miner.core.records import Fixture
from miner.git import NewRepo, Repo
from miner.stages.write import write_atomic


@dataclass(frozen=True)
class Cut:
    commit: str
    stands_on: tuple[int, ...]  # the nearest earlier cuts it descends from: its bundle leaves out what they reach


@dataclass(frozen=True)
class HistoryPlan:
    cuts: tuple[Cut, ...]  # each after every cut it descends from
    needs: dict[str, tuple[int, ...]]  # a base -> the cuts it descends from (itself among them), ascending


def plan(graph: Iterable[tuple[str, Sequence[str]]], mainline: Sequence[str], bases: Iterable[str]) -> HistoryPlan:
    """Where to cut the history for fixtures with these ``bases``.

    ``graph`` is every commit the bases and the mainline reach, with its parents, each after its
    parents; ``mainline`` the mined head's first-parent chain, root first. Besides the bases, the
    newest mainline commit each base descends from is a cut (the base itself on a linear history),
    so fixtures on different side branches share the mainline's bundles instead of each repeating it."""
    graph = list(graph)
    wanted = set(bases)
    on_mainline = {sha: i for i, sha in enumerate(mainline)}
    newest: dict[str, int] = {}  # the newest mainline commit (its position) that a commit descends from
    for sha, parents in graph:
        newest[sha] = on_mainline.get(sha, max((newest.get(p, -1) for p in parents), default=-1))
    wanted |= {mainline[newest[b]] for b in wanted if newest.get(b, -1) >= 0}
    order = [sha for sha, _ in graph if sha in wanted]
    if len(order) != len(wanted):
        raise MinerError(f"{len(wanted) - len(order)} base(s) are missing from the history read; export again")
    index = {sha: i for i, sha in enumerate(order)}
    # Which cuts each commit descends from, as bits: kept only until its last child is seen.
    children = Counter(p for _, parents in graph for p in parents)
    reach: dict[str, int] = {}
    at_cut = [0] * len(order)
    for sha, parents in graph:
        bits = 0
        for p in parents:
            bits |= reach.get(p, 0)
            children[p] -= 1
            if children[p] <= 0:
                reach.pop(p, None)
        if sha in index:
            bits |= 1 << index[sha]
            at_cut[index[sha]] = bits
        if children[sha] > 0:
            reach[sha] = bits
    cuts = tuple(Cut(sha, _nearest(at_cut, i)) for i, sha in enumerate(order))
    return HistoryPlan(cuts, {b: _bits(at_cut[index[b]]) for b in sorted(set(bases))})


def _nearest(at_cut: list[int], i: int) -> tuple[int, ...]:
    """The cuts below cut ``i`` that no other cut below it descends from. Cuts are numbered parents
    first, so the highest-numbered cut left is never below another one left."""
    found, rest = [], at_cut[i] & ~(1 << i)
    while rest:
        j = rest.bit_length() - 1
        found.append(j)
        rest &= ~at_cut[j]
    return tuple(sorted(found))


def _bits(value: int) -> tuple[int, ...]:
    return tuple(i for i in range(value.bit_length()) if value >> i & 1)


def ranges(numbers: Sequence[int]) -> list[tuple[int, int]]:
    """Ascending numbers as inclusive runs: a linear history's fixture needs one run, 0 to its cut."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def folders(names: Iterable[str]) -> dict[str, str]:
    """A folder name under ``history/`` for each repository name, safe on any file system and distinct."""
    out: dict[str, str] = {}
    for name in sorted(set(names)):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "repository"
        folder, n = slug, 1
        while folder in out.values():
            n += 1
            folder = f"{slug}-{n}"
        out[name] = folder
    return out


def write_bundles(to: Path, chosen: list[Fixture], sources: dict[str, Repo], manifest: Manifest, *, squash: bool) -> None:
    """The history bundles (none with ``squash``), each fixture's bundle and needs, and the script
    that applies them; every bundle is verified by applying it where a consumer would."""
    (to / "bundles").mkdir()
    heads = {r.name: r.head for r in manifest.repositories}
    named = folders(f.answer.repository for f in chosen)
    for name, folder in named.items():
        mine = [f for f in chosen if f.answer.repository == name]
        with tempfile.TemporaryDirectory(prefix="miner-bundle-") as tmp:
            _repository(to, folder, mine, sources[name], heads[name], Path(tmp), squash=squash)
    write_atomic(to / "materialize.sh", SCRIPT)
    (to / "materialize.sh").chmod(0o755)


def _repository(to: Path, folder: str, mine: list[Fixture], repo: Repo, head: str, tmp: Path, *, squash: bool) -> None:
    """One repository's bundles. ``work`` holds the history up to the newest base and every fixture's
    pr commit, and is only read from by ranges that stop at a fixture; ``check`` receives the
    bundles as a consumer does: history in order, then each fixture's bundle verified on top."""
    work, check = NewRepo(tmp / "work", "base"), NewRepo(tmp / "check", "base")
    work.run("config", "pack.threads", "1")  # threads share out the delta search by timing: bytes would vary
    bases = sorted({f.answer.base for f in mine if f.answer.base is not None})
    history = None if squash or not bases else plan(repo.graph([head, *bases]), repo.first_parents(head), bases)
    if history:
        roots = [c.commit for c in history.cuts]
    else:  # only the base trees, to squash
        roots = sorted({r for f in mine for r in needed(repo, f.answer, squash=True)})
    if roots:
        work.receive(repo, roots)
    if history:
        (to / "history" / folder).mkdir(parents=True)
        work.set_refs({f"refs/heads/history/{i}": cut.commit for i, cut in enumerate(history.cuts)})
        for i, cut in enumerate(history.cuts):
            path = to / "history" / folder / f"{i}.bundle"
            work.bundle(path, [f"refs/heads/history/{i}"], [history.cuts[j].commit for j in cut.stands_on])
            if check.unbundle(path) != {f"refs/heads/history/{i}": cut.commit}:
                raise MinerError(f"history bundle {i} of {folder} does not hold its cut alone; nothing was exported")
            check.set_ref(f"refs/applied/{i}", cut.commit)  # keeps git's check of the next prerequisites short
    for f in mine:
        base, pr = add_change(repo, work, f.visible, f.answer, squash=squash)
        work.set_ref("refs/heads/pr", pr)
        path = to / "bundles" / f"{f.id}.bundle"
        if history and f.answer.base is not None:
            work.bundle(path, ["refs/heads/pr"], [base])
            needs = "".join(f"history/{folder} {a} {b}\n" for a, b in ranges(history.needs[f.answer.base]))
            want = {"refs/heads/pr": pr}
        else:  # a base of its own: the bundle needs nothing
            work.set_ref("refs/heads/base", base)
            work.bundle(path, ["refs/heads/base", "refs/heads/pr"])
            needs, want = "", {"refs/heads/base": base, "refs/heads/pr": pr}
        if check.unbundle(path) != want:
            raise MinerError(f"the bundle of {f.id} holds other refs than base and pr; nothing was exported")
        write_atomic(to / "bundles" / f"{f.id}.needs", needs)


SCRIPT = r"""#!/bin/sh
# Rebuild one fixture's repository from this export's bundles, with git alone (2.28 or later):
#   sh materialize.sh FIXTURE_ID DIR [CACHE]
# DIR gets branch base (checked out) and branch pr (the change to review), the same commits and
# trees `miner materialize` makes. Only the history bundles the fixture's base descends from are
# applied (bundles/FIXTURE_ID.needs lists them), so nothing later than the fixture is in DIR.
# CACHE, a repository of your own kept between runs (made if missing; never show it to a reviewer:
# it collects the history of every fixture rebuilt through it), takes each history bundle once,
# and DIR then fetches from it only what its base reaches: much faster over many fixtures.
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: sh materialize.sh FIXTURE_ID DIR [CACHE]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
id=$1
to=$2
cache=${3:-}
[ -f "$here/bundles/$id.needs" ] || { echo "no fixture $id in $here/bundles; give an id it holds" >&2; exit 2; }
if [ -e "$to" ] && [ -n "$(ls -A "$to")" ]; then echo "$to is not empty; give a new or empty directory" >&2; exit 2; fi
if [ -n "$cache" ]; then
  [ -d "$cache" ] || git init -q --bare "$cache"
  cache=$(cd "$cache" && pwd)
fi
git init -q --template= --initial-branch=base "$to"
g() { git -C "$to" -c core.logAllRefUpdates=false "$@"; }
g config core.logAllRefUpdates false
g config gc.auto 0
# apply REPOSITORY BUNDLE REF: add the bundle's objects (git checks its prerequisites first) and
# point REF at its head, which keeps them reachable: git's check of the next bundle stays short.
apply() {
  heads=$(git -C "$1" bundle unbundle "$2") || exit 1
  git -C "$1" -c core.logAllRefUpdates=false update-ref "$3" "${heads%% *}"
}
needs=$here/bundles/$id.needs
# history_into REPOSITORY PREFIX: apply the listed history bundles whose refs are not in $known.
history_into() {
  while read -r folder first last <&3; do
    i=$first
    while [ "$i" -le "$last" ]; do
      case "$known" in
        *" $2/$folder/$i "*) ;;
        *) apply "$1" "$here/$folder/$i.bundle" "$2/$folder/$i" ;;
      esac
      i=$((i + 1))
    done
  done 3< "$needs"
}
known=" "
if [ -z "$cache" ]; then
  history_into "$to" refs/applied
elif [ -s "$needs" ]; then
  set -- $(tail -n 1 "$needs")
  tip=refs/cuts/$1/$3 # the base's own cut: listed last, after every cut it descends from
  if ! git -C "$cache" rev-parse -q --verify "$tip" >/dev/null; then
    known=" $(git -C "$cache" for-each-ref --format='%(refname)' refs/cuts/ | tr '\n' ' ')"
    history_into "$cache" refs/cuts
  fi
  g fetch -q --no-tags "$cache" "$tip:refs/applied/base"
  rm -f "$to/.git/FETCH_HEAD"
fi
apply "$to" "$here/bundles/$id.bundle" refs/applied/own
pr=$(g bundle list-heads "$here/bundles/$id.bundle" refs/heads/pr | cut -d' ' -f1)
g update-ref refs/heads/pr "$pr"
g update-ref refs/heads/base "$pr^"
g for-each-ref --format='delete %(refname)' refs/applied/ | g update-ref --stdin
rm -rf "$to/.git/refs/applied"
g read-tree --reset -u base
g repack -a -d -q
g prune --expire=now
g pack-refs --all --prune
rm -rf "$to/.git/logs"
echo "$to: branch base checked out; branch pr holds the change"
"""


HOW_TO_APPLY = """
## Rebuilding a fixture's repository

`sh materialize.sh FIXTURE_ID DIR` (git 2.28 or later) makes DIR with branch `base` checked out and
branch `pr` holding the change to review: the commits `miner materialize` makes. To rebuild many
fixtures, give a third argument, a cache repository of your own that the script makes and keeps
(`sh materialize.sh FIXTURE_ID DIR CACHE`): each history bundle is then applied once, into the cache,
and DIR fetches from it only what its base reaches. The cache collects the history of every fixture
rebuilt through it: never hand it to a reviewer.

By hand: `git init DIR`; for each line `FOLDER FIRST LAST` of `bundles/FIXTURE_ID.needs`, for N from
FIRST to LAST, `git bundle unbundle FOLDER/N.bundle` in DIR (in that order: each needs the ones
before); then `git bundle unbundle bundles/FIXTURE_ID.bundle`, which prints the `pr` commit; point
`pr` at it and `base` at its parent (`git update-ref refs/heads/base pr^`).

The history of each repository is stored once, in `history/`, cut at every fixture's base. A
fixture's `.needs` names only the cuts its base descends from: apply no other bundle for it, as the
others hold commits later than the fixture (the changes and fixes of other fixtures).
"""
