"""``miner materialize``: a fresh repository holding one fixture, and nothing from its future.

The new repository has two branches: ``base`` (checked out) and ``pr``, one new commit whose
tree is the visible part's ``after`` contents, blanked comments included. Only objects
reachable from the base are copied out of the mined repository, so no later commit, tag,
ref or reflog can be found in it; the source repository is only read.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from miner.core.errors import MinerError, RepositoryMismatchError, TargetDirError
from miner.core.output import Manifest, open_output
from miner.core.records import Answer, Visible
from miner.git import EMPTY_TREE, NewRepo, Repo
from miner.stages.write import check_outside

NEUTRAL = ("miner", "miner@invalid")
_BLOB_MODES = {0o100644, 0o100755, 0o120000}


@dataclass(frozen=True)
class Materialized:
    path: Path
    base: str
    pr: str
    commits: int


def check_target(to: Path) -> None:
    """The target must be new or an empty directory; checked before any work."""
    if to.exists() and not to.is_dir():
        raise TargetDirError(f"--to {to} is a file; give a new directory path")
    if to.is_dir() and any(to.iterdir()):
        raise TargetDirError(f"--to {to} is not empty; give a new or empty directory")
    parent = to.resolve().parent
    if parent.exists() and not os.access(parent, os.W_OK):
        raise TargetDirError(f"cannot write to {parent}; choose a --to where you have write permission")


def load_fixture(out: Path, fixture_id: str) -> tuple[Manifest, Visible, Answer]:
    fixtures = open_output(out)
    fixture = fixtures.require(fixture_id)
    return fixtures.manifest, fixture.visible, fixture.answer


def check_identity(repo: Repo, manifest: Manifest, answer: Answer) -> None:
    """``repo`` must be the repository the fixture was mined from: same root commit, and it holds the change."""
    entry = next((r for r in manifest.repositories if r.name == answer.repository), None)
    fix = f"give --repo the repository {answer.repository!r} was mined from"
    if repo.expand(answer.head) != answer.head:
        raise RepositoryMismatchError(f"{repo.path} does not hold the fixture's change; {fix}")
    # The identity is one of the roots of the mined head's history (see Repo.identity); an older
    # change need not reach it, when the repository merged in other histories, so look at the head.
    if entry is None or not repo.was_mined_as(entry.head, entry.identity):
        raise RepositoryMismatchError(f"{repo.path} has a different root commit than {answer.repository!r}; {fix}")


def message(visible: Visible) -> str:
    parts = [p for p in (visible.title.strip(), visible.description.strip()) if p]
    return "\n\n".join(parts) + ("\n" if parts else "")


def _epoch(iso_date: str) -> int:
    return int(dt.datetime.fromisoformat(iso_date.replace("Z", "+00:00")).timestamp())


def pr_changes(repo: Repo, new: NewRepo, visible: Visible, answer: Answer) -> dict[str, tuple[int, str] | None]:
    """Path -> (mode, object) in the ``pr`` tree, or None where the change removed it.

    Text comes from the visible part (so blanked comments stay blank); modes, and files the
    visible part omits (binary, too large, submodules), come from the change's own tree.
    """
    changes: dict[str, tuple[int, str] | None] = {}
    for vf in visible.files:
        if vf.old_path and vf.old_path != vf.path:
            changes[vf.old_path] = None
        if vf.status == "deleted":
            changes[vf.path] = None
            continue
        entry = repo.entry(answer.head, vf.path)
        if entry is None:
            changes[vf.path] = None
            continue
        mode, oid = entry
        if vf.after is not None and vf.encoding is not None and mode in _BLOB_MODES:
            changes[vf.path] = (mode, new.write_blob(vf.after.encode(vf.encoding)))
        elif mode in _BLOB_MODES:
            changes[vf.path] = (mode, new.write_blob(repo.object_data(oid)))
        else:  # a submodule: the entry names a commit of another repository, nothing to copy
            changes[vf.path] = (mode, oid)
    return changes


def needed(repo: Repo, answer: Answer, *, squash: bool = False) -> list[str]:
    """What ``add_change`` needs in the new repository first: the base and its history, or with
    ``squash`` the base's tree alone, or nothing for a change that made the repository's first commit."""
    if answer.base is None:
        return []
    return [repo.tree_of(answer.base)] if squash else [answer.base]


def add_change(repo: Repo, new: NewRepo, visible: Visible, answer: Answer, *, squash: bool = False) -> tuple[str, str]:
    """Write into ``new`` the fixture's base commit (the real one, a squashed copy, or an empty one) and
    the ``pr`` commit on top of it; return (base, pr). ``new`` must hold what ``needed`` names."""
    head_when = _epoch(answer.head_date)
    if answer.base is None:
        base_tree = new.write_tree(EMPTY_TREE, {})
        base = new.commit(base_tree, [], "base\n", NEUTRAL, head_when)
    elif squash:
        base_tree = repo.tree_of(answer.base)
        base = new.commit(base_tree, [], "base\n", NEUTRAL, int(repo.committer_date(answer.base).timestamp()))
    else:
        base, base_tree = answer.base, repo.tree_of(answer.base)
    tree = new.write_tree(base_tree, pr_changes(repo, new, visible, answer))
    return base, new.commit(tree, [base], message(visible), NEUTRAL, head_when)


def materialize(out: Path, fixture_id: str, to: Path, repo_path: Path, *, squash: bool = False) -> Materialized:
    """Create at ``to`` a repository with the fixture's base checked out and its change on branch ``pr``."""
    check_target(to)
    manifest, visible, answer = load_fixture(out, fixture_id)
    repo = Repo(repo_path)
    check_outside(to, "--to", [(repo.top, repo.git_dir)], suggest="review")
    check_identity(repo, manifest, answer)
    to = to.absolute()
    to.parent.mkdir(parents=True, exist_ok=True)
    staging = to.parent / f".miner-materialize-{to.name}-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    try:
        new = NewRepo(staging, "base")
        roots = needed(repo, answer, squash=squash)
        if roots:
            new.receive(repo, roots)
        base, pr = add_change(repo, new, visible, answer, squash=squash)
        commits = 2 if squash or answer.base is None else len(repo.ancestors(base)) + 1
        new.set_ref("refs/heads/base", base)
        new.set_ref("refs/heads/pr", pr)
        new.finish()
        problems = Repo(staging).fsck(strict=False)
        if problems:
            raise MinerError(f"the repository made for {fixture_id} fails git fsck: {problems[0]}")
        if to.is_dir():
            to.rmdir()  # empty, as checked: the finished repository takes its place
        os.replace(staging, to)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Materialized(path=to, base=base, pr=pr, commits=commits)
