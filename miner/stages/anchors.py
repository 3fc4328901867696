"""Blame anchors: whole-file blames of a much-fixed file along its history, so that blaming it
for one more fix only walks back to the nearest anchor.

git blame walks a file's history back until every line asked for has found its commit. For a
large file that many fixes touch (mypy's ``checker.py``: 10,000 lines, 1,000 commits, hundreds
of fixes) every fix pays that walk again, a third of a second each. An anchor is the blame of
the whole file at one commit of its first-parent history. Blaming a later revision with the
range ``anchor..rev`` stops at the anchor, and a line that reached it is looked up there: from
the anchor on, git would have carried it to the same commit. The anchors of a file form a
chain, each made from the one before in the same way, so building them costs about one walk
through the file's history.

A line that stops anywhere else (at a side branch that forked before the anchor, or under
another name) is blamed again in full, so every answer is exactly git blame's. The tests hold
a build with anchors byte-identical to one without.
"""

from __future__ import annotations

import hashlib
import pickle
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from miner.git import BlameHit, Repo

# A file gets anchors when at least this many fixes change it, one every this many of its commits.
HOT_FIXES = 12
EVERY = 24


@dataclass(frozen=True)
class Anchor:
    """The blame of every line of one file at one commit, packed (a line is three integers)."""

    commit: str
    shas: tuple[str, ...]
    paths: tuple[str, ...]
    sha_of: array
    path_of: array
    orig: array

    @staticmethod
    def pack(commit: str, hits: list[BlameHit]) -> Anchor:
        shas: dict[str, int] = {}
        paths: dict[str, int] = {}
        sha_of, path_of, orig = array("I"), array("I"), array("I")
        for hit in hits:
            sha_of.append(shas.setdefault(hit.sha, len(shas)))
            path_of.append(paths.setdefault(hit.orig_path, len(paths)))
            orig.append(hit.orig_line)
        return Anchor(commit, tuple(shas), tuple(paths), sha_of, path_of, orig)

    def to_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "shas": list(self.shas),
            "paths": list(self.paths),
            "sha_of": self.sha_of.tolist(),
            "path_of": self.path_of.tolist(),
            "orig": self.orig.tolist(),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Anchor:
        return Anchor(
            str(data["commit"]),
            tuple(data["shas"]),
            tuple(data["paths"]),
            array("I", data["sha_of"]),
            array("I", data["path_of"]),
            array("I", data["orig"]),
        )

    def hit(self, line: int, final_line: int) -> BlameHit | None:
        """What a full blame at this anchor says of ``line``, reported as ``final_line``."""
        if not 1 <= line <= len(self.orig):
            return None
        i = line - 1
        return BlameHit(
            final_line=final_line, sha=self.shas[self.sha_of[i]], orig_path=self.paths[self.path_of[i]], orig_line=self.orig[i]
        )


def blame_via(
    repo: Repo, anchor: Anchor | None, rev: str, path: str, lines: Iterable[int] | None, ignore: tuple[str, ...] = ()
) -> list[BlameHit]:
    """Exactly ``git blame`` of ``lines`` (None: all) of ``path`` at ``rev``, walking no further
    back than ``anchor``, a blame of the same path at an ancestor of ``rev``.

    ``ignore`` (``--ignore-rev``) must hold no commit the anchor's own blame went through: the
    ignored commits are newer than the anchor, so a line that reached it goes on as the anchor says.
    """
    hits, boundary = repo.blame_from(anchor.commit if anchor else None, rev, path, lines, ignore)
    if anchor is None or not boundary:
        return hits
    found: list[BlameHit] = []
    again: list[int] = []
    for hit in hits:
        if hit.sha not in boundary:
            found.append(hit)
            continue
        at_anchor = hit.sha == anchor.commit and hit.orig_path == path
        known = anchor.hit(hit.orig_line, hit.final_line) if at_anchor else None
        if known is None:
            again.append(hit.final_line)
        else:
            found.append(known)
    if again:
        found += repo.blame(rev, path, again, ignore)
    return sorted(found, key=lambda h: h.final_line)


def build_chain(repo: Repo, head: str, path: str, every: int = EVERY) -> list[Anchor]:
    """Anchors for ``path``, one every ``every`` first-parent commits that changed it, oldest first."""
    anchors: list[Anchor] = []
    previous: Anchor | None = None
    for commit in repo.first_parent_touching(head, path)[every - 1 :: every]:
        if repo.blob(commit, path) is None:  # deleted here: the chain starts again after
            previous = None
            continue
        previous = Anchor.pack(commit, blame_via(repo, previous, commit, path, None))
        anchors.append(previous)
    return anchors


def hot_paths(fixed: Iterable[Iterable[str]], touched: dict[str, int], least: int = HOT_FIXES, every: int = EVERY) -> list[str]:
    """The paths worth anchoring: changed by at least ``least`` fixes (``fixed``: each fix's paths),
    and by at least one fix for every ``every`` commits that touched them (``touched``), since the
    chain costs a blame every ``every`` commits and each fix it serves saves one deep walk."""
    counts: dict[str, int] = {}
    for paths in fixed:
        for path in set(paths):
            counts[path] = counts.get(path, 0) + 1
    return sorted(p for p, n in counts.items() if n >= least and n * every >= touched.get(p, 0))


def _file(where: Path, path: str) -> Path:
    return where / (hashlib.sha1(path.encode()).hexdigest() + ".anchors")


MAINLINE = "mainline"  # the head's first-parent chain, newest first, beside the anchors
_WALK_TO_MAINLINE = 256  # commits off the chain walked to reach it before asking libgit2


def save_mainline(where: Path, repo: Repo, head: str) -> None:
    """Write the head's first-parent chain where the workers read the anchors: most questions of
    ancestry between an anchor and a fix's parent are then answered by two positions on it."""
    where.mkdir(parents=True, exist_ok=True)
    tmp = where / (MAINLINE + ".tmp")
    tmp.write_bytes(repo.run("rev-list", "--first-parent", head))
    tmp.replace(where / MAINLINE)


def save(where: Path, path: str, anchors: list[Anchor]) -> None:
    """Write one path's anchors for the workers (written whole, then renamed into place)."""
    where.mkdir(parents=True, exist_ok=True)
    target = _file(where, path)
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(anchors, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(target)


class Anchored:
    """A repository whose blame starts from the nearest anchor: the ``History`` that labelling reads.

    Blame that looks through commits (``ignore``) starts from an anchor only when every ignored
    commit is newer than it (it did not look through them); otherwise it runs in full.
    """

    def __init__(self, repo: Repo, where: str) -> None:
        self.repo = repo
        self.where = Path(where)
        self._loaded: OrderedDict[str, list[Anchor]] = OrderedDict()
        self._mainline: dict[str, int] | None = None
        self._reach: dict[str, int | None] = {}
        self.blob = repo.blob
        self.is_cosmetic = repo.is_cosmetic
        self.is_ancestor = repo.is_ancestor
        self.from_scratch = repo.from_scratch
        self.same_lines = repo.same_lines
        self.removed_text = repo.removed_text
        self.removed_lines = repo.removed_lines
        self.occurrences = repo.occurrences

    def _anchors(self, path: str) -> list[Anchor]:
        if path not in self._loaded:
            file = _file(self.where, path)
            self._loaded[path] = pickle.loads(file.read_bytes()) if file.is_file() else []
            if len(self._loaded) > 16:  # a worker keeps the anchors of a few files, not of all
                self._loaded.popitem(last=False)
        self._loaded.move_to_end(path)
        return self._loaded[path]

    def _depth(self) -> dict[str, int]:
        """Each commit of the head's first-parent chain, by its distance from the head."""
        if self._mainline is None:
            file = self.where / MAINLINE
            listed = file.read_text().split() if file.is_file() else []
            self._mainline = {sha: n for n, sha in enumerate(listed)}
        return self._mainline

    def _is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """``Repo.is_ancestor``, answered from the first-parent chain when ``ancestor`` is on it
        (libgit2 takes milliseconds a question: blame asks it for every fix): a commit of the chain
        is below ``descendant`` when it is no newer than the newest commit of the chain below
        ``descendant``. Any other question goes to libgit2."""
        depth = self._depth()
        if ancestor in depth:
            reach = self._newest_on_chain(descendant)
            if reach is not None:
                return depth[ancestor] >= reach
        return self.repo.is_ancestor(ancestor, descendant)

    def _newest_on_chain(self, sha: str) -> int | None:
        """How far from the head the newest commit of the chain is that ``sha`` is or descends from
        (the number of commits in the chain when none is). Every parent is followed until it meets
        the chain, since a commit off it may have merged the chain since it forked; None when more
        than ``_WALK_TO_MAINLINE`` commits off the chain would have to be walked."""
        depth = self._depth()
        if sha in depth:
            return depth[sha]
        if sha in self._reach:
            return self._reach[sha]
        newest = len(depth)
        seen = {sha}
        todo = [sha]
        while todo:
            for parent in self.repo.parents(todo.pop()):
                if parent in depth:
                    newest = min(newest, depth[parent])
                elif parent in self._reach:
                    known = self._reach[parent]
                    if known is None:
                        todo, newest = [], -1
                        break
                    newest = min(newest, known)
                elif parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
            if len(seen) > _WALK_TO_MAINLINE:
                newest = -1
                break
        if len(self._reach) >= 100_000:
            self._reach.clear()
        found = self._reach[sha] = None if newest < 0 else newest
        return found

    def _nearest(self, rev: str, path: str, ignore: tuple[str, ...] = ()) -> Anchor | None:
        """The newest anchor that is ``rev`` or an ancestor of it, trying a few from the newest
        one committed no later than ``rev``. With ``ignore``, one whose own blame may have gone
        through an ignored commit (the anchor is that commit or newer) is passed over for an older
        one: every ignored commit must be newer than the anchor."""
        anchors = self._anchors(path)
        if not anchors:
            return None
        when = self.repo.commit_time(rev)
        tried = 0
        for anchor in reversed(anchors):
            try:
                if self.repo.commit_time(anchor.commit) > when:
                    continue
                if anchor.commit == rev or self._is_ancestor(anchor.commit, rev):
                    if not ignore or (anchor.commit != rev and not any(self._behind(sha, anchor) for sha in ignore)):
                        return anchor
            except (KeyError, ValueError, pygit2.GitError):
                continue  # an anchor an earlier build left at a commit this history no longer has
            tried += 1
            if tried == 3:
                break
        return None

    def _behind(self, sha: str, anchor: Anchor) -> bool:
        """Whether the anchor's blame may have gone through ``sha`` (it is the anchor or older)."""
        return sha == anchor.commit or self._is_ancestor(sha, anchor.commit)

    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        ignore = tuple(sorted(set(ignore)))
        anchor = self._nearest(rev, path, ignore)
        if anchor is None:
            return self.repo.blame(rev, path, lines, ignore)
        wanted = sorted(set(lines))
        if anchor.commit != rev:
            return blame_via(self.repo, anchor, rev, path, wanted, ignore)
        hits = [anchor.hit(n, n) for n in wanted]
        return [h for h in hits if h] if all(hits) else self.repo.blame(rev, path, wanted)
