"""Stage 4: pick clean commits: changes that nothing later fixed or reverted.

A candidate must look like a pull request a reviewer could be handed: source code changed (not
only tests, docs, examples, configuration, vendored or generated files), code added (not a
deletion alone), not a merge, the initial import, a bot's, a revert, a fix or a release, not too
large; and once sampled, not a change of layout, comments, type annotations or message text alone,
not a submodule or version bump, not a complete rename, not under ``clean.min_code_lines`` lines of
code (``unreviewable``). Vendored trees count as vendored wherever they lie
(``classify.vendored_trees``). It must not be blamed or named by any fix at any tier, and no later
commit within the waiting window may have rewritten or removed the lines it added in a commit that
reads as a correction (``corrected_by``), in any kind of file, tests and CI included. It must have
been observed for the waiting window: a change younger than that may hold a bug nobody has found
yet. The sample is seeded: the same seed, repository and config always pick the same commits.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from miner.core.classify import has_fix_word, has_generated_marker, is_bot, path_kind, plain_subject, reverted_shas
from miner.core.config import SCOPES, Config, Scope
from miner.core.errors import MinerError, MissingObjectError
from miner.core.lexer import code_lines, code_tokens
from miner.core.records import CleanPick, CleanQuota, CommitMeta, FileDiff, Verdict
from miner.git import BlameHit, Repo
from miner.stages.vet import Sides, conventional, neutral, sides_reader

# Where a fix that followed a change counts against it (``Scope``, ``SCOPES``: broadest first): its
# directories, its source files, or (``lines``) only where a later correction rewrote its own lines
# (``corrected_by``, checked at every scope).
Near = Literal["file", "directory"]  # how near a fix followed a change: in its files, or only in their directories


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


class FixTouches:
    """When fix commits touched each file and each directory, to ask: did a fix follow this change there?

    Blame misses the fixes whose defect lines the fix did not rewrite (the defect came from a
    change elsewhere, often a neighbouring file, or the fix only added lines), so a change that
    a fix followed soon, in the same directory, is not trusted as clean. Measured with trailers
    hidden, before any blame evidence: the share of candidates that a `Fixes:` trailer names
    fell from 6.2% to 0.6% on rdma-core (1.8% matching files only) with a 365-day window.
    """

    def __init__(self, fixes: Iterable[CommitMeta]) -> None:
        touched: dict[tuple[str, str], list[tuple[int, str]]] = {}
        self._paths: dict[str, tuple[str, ...]] = {}
        for fix in fixes:
            paths = sorted({p for f in fix.files for p in (f.path, f.old_path) if p is not None})
            self._paths[fix.sha] = tuple(paths)
            for key in {("file", p) for p in paths} | {("directory", _directory(p)) for p in paths}:
                touched.setdefault(key, []).append((fix.committer_time, fix.sha))
        self._touched = {key: sorted(found) for key, found in touched.items()}
        self._times = {key: [t for t, _ in found] for key, found in self._touched.items()}

    def _within(self, scope: str, key: str, start: int, end: int) -> list[tuple[int, str]]:
        """The fixes that touched ``key`` (a file or a directory) after ``start`` and no later than ``end``."""
        times = self._times.get((scope, key), [])
        return self._touched.get((scope, key), [])[bisect.bisect_right(times, start) : bisect.bisect_right(times, end)]

    def nearest(self, meta: CommitMeta, paths: Iterable[str], days: int) -> Near | None:
        """How near a fix followed ``meta`` within ``days``: in one of ``paths`` (``file``), only
        elsewhere in their directories (``directory``), or not at all (None)."""
        start, end, paths = meta.committer_time, meta.committer_time + days * 86400, set(paths)
        if any(self._within("file", p, start, end) for p in paths):
            return "file"
        if any(self._within("directory", d, start, end) for d in {_directory(p) for p in paths}):
            return "directory"
        return None

    def followed(self, meta: CommitMeta, paths: Iterable[str], days: int) -> list[tuple[str, tuple[str, ...]]]:
        """The fixes within ``days`` after ``meta`` that touched ``paths`` or their directories, oldest
        first, each with its files in those directories: what the fix window rule read."""
        start, end = meta.committer_time, meta.committer_time + days * 86400
        directories = {_directory(p) for p in paths}
        found = sorted({hit for d in directories for hit in self._within("directory", d, start, end)})
        return [(sha, tuple(p for p in self._paths[sha] if _directory(p) in directories)) for _, sha in found]


def stops(nearest: Near | None, scope: Scope) -> bool:
    """Whether a fix that followed as near as ``nearest`` keeps a change out at ``scope``: one in its
    files at scope ``directory`` or ``file``, one only in its directories at scope ``directory``."""
    return nearest is not None and scope != "lines" and SCOPES.index(scope) <= SCOPES.index(nearest)


def why_not_clean(
    meta: CommitMeta,
    config: Config,
    mined_at: int,
    blamed: set[str],
    fixes: set[str],
    touches: FixTouches | None = None,
    scope: Scope | None = None,
) -> str | None:
    """The first reason a commit cannot be a clean fixture, or None. Cheap checks only. A fix that
    followed it counts at ``scope`` (``clean.fix_window_scope`` unless given)."""
    if not meta.parents:
        return "initial_import"
    if is_bot(meta, config):
        return "bot_author"
    if meta.sha in fixes:
        return "is_fix"
    if reverted_shas(meta.message, config.fixes):  # a revert that is not a fix: a re-land
        return "is_revert"
    if meta.sha in blamed:
        return "blamed_by_fix"
    subject = plain_subject(meta.message)
    if any(re.search(p, subject, re.I) for p in config.clean.release_subjects):
        return "release_commit"
    typed = conventional(meta.subject)
    if typed is not None and typed[0] in config.clean.no_review_types:
        return "not_review_type"
    source = [f for f in meta.files if path_kind(f.path, config.paths) == "source" and not f.binary]
    if not source:
        return "no_source_change"
    if not any(f.added for f in source):
        return "deletion_only"
    if meta.changed_lines > config.clean.max_changed_lines:
        return "too_large"
    if not meta.paths_are_utf8:
        return "non_utf8_path"
    if (mined_at - meta.committer_time) < config.clean.wait_days * 86400 and not config.clean.admit_young:
        return "too_young"
    if touches is not None and stops(fix_nearby(meta, config, touches), scope or config.clean.fix_window_scope):
        return "fix_followed_nearby"
    return None


def fixes_nearby(meta: CommitMeta, config: Config, touches: FixTouches | None) -> list[tuple[str, tuple[str, ...]]]:
    """The fixes that followed ``meta`` within ``clean.fix_window_days`` in its source files or their
    directories, oldest first, each with its files there (``FixTouches.followed``)."""
    if touches is None or not config.clean.fix_window_days:
        return []
    return touches.followed(meta, source_paths(meta, config), config.clean.fix_window_days)


def fix_nearby(meta: CommitMeta, config: Config, touches: FixTouches | None) -> Near | None:
    """How near a fix followed ``meta`` within ``clean.fix_window_days`` (``FixTouches.nearest``), in its source files."""
    if touches is None or not config.clean.fix_window_days:
        return None
    return touches.nearest(meta, source_paths(meta, config), config.clean.fix_window_days)


def confidence(
    observed_days: int, survival: float | None, config: Config, nearby: Near | None = None
) -> Literal["high", "medium", "low"]:
    """How far a clean fixture is trusted: ``low`` when it was observed for less than the waiting
    window (kept with ``clean.admit_young``), ``medium`` when less than ``clean.min_survival`` of its
    added lines still stand at the mined commit, or when a fix followed it nearer than
    ``clean.fix_window_scope`` allows (a fallback pick: ``nearby``), ``high`` otherwise."""
    if observed_days < config.clean.wait_days:
        return "low"
    if survival is not None and survival < config.clean.min_survival:
        return "medium"
    if stops(nearby, config.clean.fix_window_scope):
        return "medium"
    return "high"


def answer_fields(
    observed_days: int | None, pick: CleanPick | None, survival: float | None, verdict: Verdict | None, config: Config
) -> dict[str, Any]:
    """What a clean fixture's answer records of how clean it is: the confidence (see ``confidence``),
    the wait it was held to, the share of its lines still standing, its stratum, how near a fix
    followed it when the sample took it past ``clean.fix_window_scope``, and the judge's verdict.
    Nothing for a bug fixture (``observed_days`` None)."""
    if observed_days is None:
        return {}
    nearby = pick.fix_nearby if pick is not None else None
    return {
        "clean_confidence": confidence(observed_days, survival, config, nearby),
        "wait_days": config.clean.wait_days,
        "survival": survival,
        "stratum": (pick.stratum if pick is not None else "") or None,
        "judge": verdict,
        **({"fix_nearby": nearby} if stops(nearby, config.clean.fix_window_scope) else {}),
    }


def survival_shares(
    added: Mapping[str, Mapping[str, int]], authors: Mapping[str, Mapping[str, int] | None]
) -> dict[str, float | None]:
    """Per clean pick, the share of the source lines it added (``added``: pick -> path -> lines)
    that blame at the head still gives to it (``authors``: path -> commit -> lines). Files gone
    from the head are left out of the share (unknown, rather than counted as gone)."""
    found: dict[str, float | None] = {}
    for sha, files in added.items():
        present = {path: n for path, n in files.items() if authors.get(path) is not None}
        total = sum(present.values())
        standing = sum(min(n, (authors[path] or {}).get(sha, 0)) for path, n in present.items())
        found[sha] = round(standing / total, 4) if total else None
    return found


def sample_order(sha: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{sha}".encode()).hexdigest()


def wanted(bugs: int, config: Config) -> int:
    return min(config.clean.max_count, max(config.clean.min_count, math.ceil(bugs * config.clean.ratio)))


def source_paths(meta: CommitMeta, config: Config) -> list[str]:
    return [f.path for f in meta.files if path_kind(f.path, config.paths) == "source" and not f.binary]


# A version, with a pre-release or development suffix if it has one (2.1.0, 2.1.0rc1, 1.4.0-beta.2, 0.9.dev3)
_VERSION = re.compile(r"version|\b\d+\.\d+(\.\d+)+([-.]?(rc|a|b|alpha|beta|dev|post|pre)\.?\d*)?\b", re.I)
_NUMBERS = re.compile(r"\b[0-9a-f]{7,}\b|\d+")  # numbers, and hashes as a release's checksums hold them


def unreviewable(
    diffs: list[FileDiff], sides: Sides, config: Config, still_used: Callable[[set[str]], bool] = lambda names: True
) -> str | None:
    """Why a change, read whole, gives a reviewer nothing to review, or None: its source files are
    only submodules, or changed only in layout, comments, type annotations or message text (the
    lexer, or Python's syntax tree, decides), or by renaming a name everywhere it occurs (``still_used``
    says whether old names are left anywhere in the tree: a rename that missed a caller breaks it); its changed
    lines only bump versions, numbers or checksums (a release, a copyright or golden-file year);
    or it changes fewer than ``clean.min_code_lines`` lines of code."""
    source = [d for d in diffs if path_kind(d.new_path or d.old_path or "", config.paths) == "source" and not d.binary]
    real = [d for d in source if not d.link]
    if not real:
        return "submodule_only" if source else "no_source_change"
    how = neutral(real, sides, config)
    if how:
        return f"{how}_only"
    changed = [
        d for d in diffs if not d.binary and not d.link and path_kind(d.new_path or d.old_path or "", config.paths) != "docs"
    ]
    removed = sorted(_NUMBERS.sub("0", t) for d in changed for _, t in d.removed if t.strip())
    added = sorted(_NUMBERS.sub("0", t) for d in changed for _, t in d.added if t.strip())
    lines = [t for d in changed for _, t in (*d.added, *d.removed) if t.strip()]
    if lines and (removed == added or all(_VERSION.search(t) for t in lines)):
        return "bump_only"
    sized = [(d, *sides(d)) for d in real]
    renames = [_renamed(d.new_path or "", before, after) for d, before, after in sized]
    if all(r is not None for r in renames) and not still_used(set().union(*renames)):  # type: ignore[arg-type]
        return "rename_only"
    if sum(_code_changed(d, before, after) for d, before, after in sized) < config.clean.min_code_lines:
        return "too_small"
    return None


def _code_changed(diff: FileDiff, before: bytes | None, after: bytes | None) -> int:
    """How many of a file's added and removed lines hold code (not comments, not blank)."""
    count = 0
    for data, path, lines in ((before, diff.old_path, diff.removed), (after, diff.new_path, diff.added)):
        if data is not None and path and lines:
            code = code_lines(path, data.decode("utf-8", "replace"))
            count += sum(1 for n, _ in lines if n in code)
    return count


def _renamed(path: str, before: bytes | None, after: bytes | None) -> set[str] | None:
    """The old names, when a file changed only by renaming one or two names wherever they occur in
    it (a spelling fix of an identifier, "Extention" to "Extension"): the same tokens, but for a
    consistent substitution of words. None when it changed otherwise."""
    if before is None or after is None:
        return None
    old = code_tokens(path, before.decode("utf-8", "replace"))
    new = code_tokens(path, after.decode("utf-8", "replace"))
    if old is None or new is None or len(old) != len(new) or old == new:
        return None
    pairs = {(a, b) for a, b in zip(old, new) if a != b}
    names = dict(pairs)
    if (
        len(pairs) <= 2
        and len(names) == len(pairs)
        and len(set(names.values())) == len(pairs)
        and all(_WORD.fullmatch(a) and _WORD.fullmatch(b) for a, b in pairs)
        and not set(names) & set(new)
    ):
        return set(names)
    return None


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Later(Protocol):
    """What ``corrected_by`` reads of the history after a change."""

    def later_commits(self, sha: str, head: str, paths: list[str], until: int) -> list[CommitMeta]: ...
    def diffs(self, shas: Iterable[str]) -> Iterator[tuple[str, list[FileDiff]]]: ...
    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]: ...
    def blame_from(
        self, base: str | None, rev: str, path: str, lines: Iterable[int] | None, ignore: Iterable[str] = ()
    ) -> tuple[list[BlameHit], set[str]]: ...


def reads_as_correction(meta: CommitMeta, config: Config, fixes: AbstractSet[str]) -> bool:
    """A later commit that says it repairs something: a fix by the walk's rules, a revert, or
    words of correction (``clean.corrections``: "correct", "broken", "bump year", ...)."""
    if meta.sha in fixes or reverted_shas(meta.message, config.fixes):
        return True
    if has_fix_word(meta.message, config.fixes):
        return True
    return any(re.search(p, meta.message, re.I) for p in config.clean.corrections)


def is_correction(meta: CommitMeta, config: Config, fixes: AbstractSet[str]) -> bool:
    """A later commit ``corrected_by`` reads: one that says it repairs something and has a parent to blame at."""
    return bool(meta.parents) and reads_as_correction(meta, config, fixes)


def followed_paths(diffs: list[FileDiff]) -> list[str]:
    """The files whose later history ``corrected_by`` reads: those the change added text lines to."""
    return sorted({d.new_path for d in diffs if d.new_path and d.added and not d.binary and not d.link})


@dataclass(frozen=True)
class Listed:
    """The later commits within a candidate's window that read as corrections and touched ``paths``,
    worked out ahead from the walk's records (``miner.git.history.PathHistory``): what
    ``corrected_by`` asks git for when the files it follows are ``paths``."""

    paths: tuple[str, ...]
    commits: tuple[CommitMeta, ...]


def window_end(meta: CommitMeta, config: Config) -> int:
    """The last moment (seconds since the epoch) a later commit may correct ``meta`` and count."""
    return meta.committer_time + config.clean.wait_days * 86400


_LINKS = (0o120000, 0o160000)  # a symlink, a submodule: followed_paths leaves them out


def expected_followed(repo: Repo, meta: CommitMeta) -> tuple[str, ...]:
    """What ``followed_paths`` will say of the change's diff, told from the walk's line counts and
    the change's tree (the worker that reads the diff checks it, and asks git when it differs)."""
    paths = set()
    for f in meta.files:
        entry = repo.entry(meta.sha, f.path) if f.added and not f.binary else None
        if entry is not None and entry[0] not in _LINKS:
            paths.add(f.path)
    return tuple(sorted(paths))


def corrected_by(
    meta: CommitMeta,
    diffs: list[FileDiff],
    history: Later,
    head: str,
    config: Config,
    fixes: AbstractSet[str],
    listed: Listed | None = None,
) -> str | None:
    """The first later commit, within the waiting window, that reads as a correction and rewrote
    or removed a line this change added, in any kind of file (code, tests, examples, CI, scripts);
    None when there is none. Blame at that commit's parent says whose lines it changed. The later
    commits are ``listed``'s when it was worked out for the same files, else git's."""
    paths = followed_paths(diffs)
    if not paths or not meta.parents:
        return None
    if listed is not None and list(listed.paths) == paths:
        later = {m.sha: m for m in listed.commits}
    else:
        later = {
            m.sha: m
            for m in history.later_commits(meta.sha, head, paths, window_end(meta, config))
            if is_correction(m, config, fixes)
        }
    for sha, found in history.diffs(sorted(later, key=lambda s: (later[s].committer_time, s))):
        if rewrote(meta, later[sha], found, history):
            return sha
    return None


def rewrote(change: CommitMeta, later: CommitMeta, diffs: list[FileDiff], history: Later) -> list[str]:
    """The files (as ``later``'s parent has them) where ``later`` rewrote or removed lines ``change`` wrote:
    blame at its parent says whose lines it changed.

    Blame walks back no further than the change's parent: a line the change wrote is followed
    through the commits after it alone, exactly as a full blame follows it, and a line older
    than the change stops at that boundary instead of walking on to whoever wrote it."""
    found: list[str] = []
    base = change.parents[0] if change.parents else None
    for diff in diffs:
        if diff.old_path is None or diff.binary or diff.link or not diff.removed:
            continue
        hits, _ = history.blame_from(base, later.parents[0], diff.old_path, [n for n, _ in diff.removed])
        if any(hit.sha == change.sha for hit in hits):
            found.append(diff.old_path)
    return found


def later_changes(
    meta: CommitMeta, diffs: list[FileDiff], history: Later, head: str, config: Config, limit: int = 8
) -> list[tuple[CommitMeta, list[str]]]:
    """The later commits within the waiting window that rewrote or removed lines this change added,
    whatever their message says, oldest first (at most ``limit``), each with the files where they
    did: what a reader follows to tell whether a change was later corrected."""
    paths = followed_paths(diffs)
    if not paths or not meta.parents:
        return []
    later = {m.sha: m for m in history.later_commits(meta.sha, head, paths, window_end(meta, config)) if m.parents}
    found: list[tuple[CommitMeta, list[str]]] = []
    for sha, changed in history.diffs(sorted(later, key=lambda s: (later[s].committer_time, s))):
        where = rewrote(meta, later[sha], changed, history)
        if where:
            found.append((later[sha], where))
            if len(found) == limit:
                break
    return found


Stratum = tuple[str, str, str]
_SIZES = ((5, "1-5"), (20, "6-20"), (50, "21-50"), (200, "51-200"), (10**9, "201+"))


def stratum(meta: CommitMeta, config: Config) -> Stratum:
    """(changed lines, files touched, language) buckets: what a reviewer would notice of a change's shape."""
    lines = meta.changed_lines
    size = next(label for bound, label in _SIZES if lines <= bound)
    files = len(meta.files)
    spread = "1" if files <= 1 else "2-3" if files <= 3 else "4+"
    counts: Counter[str] = Counter()
    for f in meta.files:
        if path_kind(f.path, config.paths) == "source":
            counts[f.path.rsplit(".", 1)[-1].lower() if "." in f.path.rsplit("/", 1)[-1] else "(none)"] += f.added + f.removed + 1
    language = min(counts, key=lambda k: (-counts[k], k)) if counts else "(none)"
    return size, spread, language


def allocate(targets: Counter[Stratum], count: int) -> dict[Stratum, int]:
    """Split ``count`` over strata in proportion to ``targets`` (largest remainder; ties to the larger stratum)."""
    total = sum(targets.values())
    if not total or not count:
        return {}
    exact = {s: count * n / total for s, n in targets.items()}
    quotas = {s: math.floor(q) for s, q in exact.items()}
    left = count - sum(quotas.values())
    for s in sorted(exact, key=lambda s: (-(exact[s] - quotas[s]), -targets[s], s))[:left]:
        quotas[s] += 1
    return quotas


# The answers of ``refusal`` that read the history after the candidate (``corrected_by``); one that an
# object was missing is never reused (the objects may have been fetched since); every other answer is
# about the change alone.
_FOLLOWED = (None, "corrected_later")
MISSING = "clean_missing_object"


def refusal(
    repo: Repo, head: str, config: Config, fixes: AbstractSet[str], meta: CommitMeta, listed: Listed | None = None
) -> str | None:
    """The checks that read git, for a candidate the sample reaches: why it is refused (a reformat,
    generated code, nothing to review, corrected later), or None. ``listed``: the later commits
    ``corrected_by`` reads, when the build worked them out ahead."""
    if repo.is_cosmetic(meta.sha):
        return "whitespace_only"
    if all(_generated(repo, meta.sha, path, config) for path in source_paths(meta, config)):
        return "generated_only"
    try:
        ((_, diffs),) = list(repo.diffs([meta.sha]))
        reason = unreviewable(
            diffs,
            sides_reader(repo.blob, meta.parents[0], meta.sha),
            config,
            lambda names: any(repo.occurrences([meta.sha], names)[meta.sha].values()),
        )
        if reason:
            return reason
        return "corrected_later" if corrected_by(meta, diffs, repo, head, config, fixes, listed) else None
    except MissingObjectError:
        return MISSING


@dataclass(frozen=True)
class Checked:
    """A ``refusal`` an earlier build asked for: the head it mined, the fixes it knew (``fixes_digest``)
    and the answer."""

    head: str
    fixes: str
    reason: str | None


def fixes_digest(fixes: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(fixes)).encode()).hexdigest()[:16]


def still_answered(
    repo: Repo,
    head: str,
    config: Config,
    commits: Mapping[str, CommitMeta],
    fixes: AbstractSet[str],
    earlier: Mapping[str, Checked],
) -> dict[str, str | None]:
    """The earlier answers of ``refusal`` that a check at ``head`` would give again (``earlier`` made with
    the same settings).

    A refusal for what the change is (a reformat, generated, no review) holds at any head; one for a
    missing object is asked again. Otherwise (clean, or corrected later) the answer depends on the history after the
    candidate through ``corrected_by``: the commits ``git log --until=<end of its window> head
    ^candidate -- <its followed paths>`` shows, which of them are fixes, and blame at their parents.
    It still holds when the earlier head is on the first-parent chain of ``head``; no commit new since
    then was committed within the candidate's window (so none is shown); every old commit is a fix as
    it was; and git's history simplification follows the first parent of every merge new on that
    chain (for those paths: a merge the same as its first parent there, or the same as none of its
    parents), so every commit shown before is shown again. Anything else is asked again."""
    kept: dict[str, str | None] = {}
    for old in sorted({c.head for c in earlier.values()}):
        mine = {sha: c for sha, c in earlier.items() if c.head == old}
        kept.update((sha, c.reason) for sha, c in mine.items() if c.reason not in _FOLLOWED and c.reason != MISSING)
        mine = {sha: c for sha, c in mine.items() if c.reason in _FOLLOWED}
        if old == head:
            kept.update((sha, c.reason) for sha, c in mine.items() if c.fixes == fixes_digest(fixes))
            continue
        try:
            since = repo.since(old, head)
        except MinerError:
            continue
        if since is None or not since[0]:
            continue
        times, merges = since
        earliest, digest = min(times.values()), fixes_digest(f for f in fixes if f not in times)
        waited = {
            sha: c
            for sha, c in mine.items()
            if sha in commits and c.fixes == digest and window_end(commits[sha], config) < earliest
        }
        prunes = _prunes_first_parent(repo, merges)
        # The files a candidate's history is read for, from its diff: only for those a merge may prune
        # (their files, a superset, meet a merge's changes), and only when there are such merges.
        touching = {sha for sha in waited if merges and prunes(_all_paths(commits[sha]), any_other=False)}
        followed = {sha: set(followed_paths(diffs)) for sha, diffs in repo.diffs(sorted(touching))} if touching else {}
        kept.update((sha, c.reason) for sha, c in waited.items() if sha not in touching or not prunes(followed.get(sha, set())))
    return kept


def _all_paths(meta: CommitMeta) -> set[str]:
    return {f.path for f in meta.files} | {f.old_path for f in meta.files if f.old_path}


def _prunes_first_parent(repo: Repo, merges: list[tuple[str, list[str]]]) -> Callable[..., bool]:
    """Whether ``git log -- paths`` follows only another parent than the first of some merge of
    ``merges``: it does at a merge that differs from its first parent in ``paths`` and is the same as
    another parent there. With ``any_other=False``: whether some merge differs from its first parent
    in ``paths`` at all (true for any superset of paths git would prune for)."""
    differs = [[repo.differing_paths(parent, merge) for parent in parents] for merge, parents in merges]

    def prunes(paths: set[str], any_other: bool = True) -> bool:
        return any(paths & first and (not any_other or any(not paths & other for other in others)) for first, *others in differs)

    return prunes


def _generated(repo: Repo, sha: str, path: str, config: Config) -> bool:
    try:
        return has_generated_marker(repo.blob(sha, path) or b"", config.paths)
    except MissingObjectError:
        return False


@runtime_checkable
class Planned(Protocol):
    """A check told in advance the order it will be asked in, so it can work ahead (miner.runner.engine.Lookahead)."""

    def __call__(self, meta: CommitMeta) -> str | None: ...

    def plan(self, order: list[CommitMeta]) -> None: ...


@dataclass(frozen=True)
class Known:
    """What the rest of the build knows that decides whether a commit may be clean: when the
    repository was mined (its head's committer time), the commits blame reached from fixes, the
    fixes, and which fixes touched which paths when."""

    mined_at: int
    blamed: set[str]
    fixes: set[str]
    touches: FixTouches | None = None


@dataclass(frozen=True)
class Quota:
    """How many clean commits to pick, and the strata of the bug fixtures they should look like."""

    count: int
    match: Sequence[Stratum] = ()


# The reasons of ``why_not_clean`` that say what a commit is (a fix, a release, no source changed, too
# large to review ...): a commit dropped for one is no change a clean fixture may be made of. Its other
# reasons (too young, a fix followed nearby) and the checks' refusals are about when and how it was
# watched afterwards: a build may relax those.
WHAT_IT_IS = frozenset(
    {
        "initial_import",
        "bot_author",
        "is_fix",
        "is_revert",
        "blamed_by_fix",
        "release_commit",
        "not_review_type",
        "no_source_change",
        "deletion_only",
        "too_large",
        "non_utf8_path",
    }
)
# What relaxes the reasons a build may relax, as the summary tells a user short of clean fixtures.
RELAXED_BY = {
    "fix_followed_nearby": "clean.fix_window_fallback: [file, lines], or a judge (--judge)",
    "too_young": "clean.wait_days, or clean.admit_young: true",
}


def clean_quota(wanted_count: int, found: int, considered: int, dropped: Mapping[str, int]) -> CleanQuota:
    """How the clean sample of a repository fared: ``considered`` commits were offered to it and
    ``dropped`` counts why it refused each (``pick_clean``'s counts)."""
    candidates = considered - sum(n for reason, n in dropped.items() if reason in WHAT_IT_IS)
    stopped = {r: n for r, n in dropped.items() if n and r not in WHAT_IT_IS and r not in ("not_sampled", "outside_window")}
    most = min(stopped, key=lambda r: (-stopped[r], r)) if stopped else None
    return CleanQuota(
        wanted=wanted_count,
        found=found,
        reached=found >= wanted_count,
        candidates=candidates,
        too_few_changes=candidates < wanted_count,
        stopped_most=most,
        stopped_most_count=stopped.get(most, 0) if most else 0,
    )


def fix_window_scopes(config: Config, judged: bool = False) -> tuple[Scope, ...]:
    """Where a fix that followed a candidate keeps it out of the sample, strictest first:
    ``clean.fix_window_scope``, then its fallback (a judged build's own, whose judge reads those fixes),
    each scope narrower than the one before (one that is not is passed over)."""
    fallback = config.clean.judged_fix_window_fallback if judged else config.clean.fix_window_fallback
    scopes: list[Scope] = [config.clean.fix_window_scope]
    for scope in fallback:  # one no narrower than the scope before it would add nothing
        if SCOPES.index(scope) > SCOPES.index(scopes[-1]):
            scopes.append(scope)
    return tuple(scopes)


def pick_clean(
    commits: Iterable[CommitMeta],
    quota: Quota,
    config: Config,
    known: Known,
    check: Callable[[CommitMeta], str | None],
    dropped: Counter[str],
    scopes: Sequence[Scope] = (),
) -> list[CleanPick]:
    """A seeded sample of ``quota.count`` clean commits; counts every refused candidate by reason.

    With ``quota.match`` (the strata of the repository's bug fixtures) the sample is stratified:
    each stratum gets its share of ``count``, drawn in seeded order, so clean changes look
    like bug changes in size, spread and language; strata with too few candidates are
    filled from the rest in seeded order. ``check`` holds the checks that need git (a
    whitespace-only or generated change, ``unreviewable``, ``corrected_by``): it runs only on
    the commits the sample reaches and gives the reason one is refused.

    ``scopes`` (``fix_window_scopes``; ``clean.fix_window_scope`` alone by default) say where a fix
    that followed a candidate within ``clean.fix_window_days`` keeps it out, strictest first. The
    sample draws from the candidates that pass the first; only when too few of them pass the checks
    does it go on to those that pass the next, drawn the same way (the strata's shares first), and
    so on. A pick records how near a fix followed it (``fix_nearby``). The candidates of a tier the
    sample never reached are counted as ``fix_followed_nearby``.
    """
    count, match, mined_at = quota.count, quota.match, known.mined_at
    scopes = tuple(scopes) or (config.clean.fix_window_scope,)
    tiers: list[list[CommitMeta]] = [[] for _ in scopes]
    nearby: dict[str, Near | None] = {}
    for meta in commits:
        reason = why_not_clean(meta, config, mined_at, known.blamed, known.fixes)
        near = None if reason else fix_nearby(meta, config, known.touches)
        tier = None if reason else next((n for n, scope in enumerate(scopes) if not stops(near, scope)), None)
        if tier is None:
            dropped[reason or "fix_followed_nearby"] += 1
            continue
        nearby[meta.sha] = near
        tiers[tier].append(meta)
    quotas = sorted(allocate(Counter(match), count).items())
    drawn = [_drawn(tier, config) for tier in tiers]
    if isinstance(check, Planned):  # the order candidates are asked in; a group stops early at its quota
        check.plan([meta for eligible, groups in drawn for meta in _asking_order(eligible, groups, quotas)])
    taken: set[str] = set()
    refused: set[str] = set()
    picks: list[CleanPick] = []
    many: Callable[[Sequence[CommitMeta]], list[str | None]] | None = getattr(check, "many", None)

    def take(wanted: list[tuple[list[CommitMeta], int]]) -> None:
        """For each (candidates, want), the first ``want`` candidates (in order) that pass the checks. They
        are asked in rounds, each round as many of each list as it still wants, so a check that runs side
        by side (``many``: the judge's) does, for every list at once, and none is asked for nothing; the
        picks are those of asking one at a time (the lists are apart: strata share no commit)."""
        waiting = [iter([m for m in ms if m.sha not in taken and m.sha not in refused]) for ms, _ in wanted]
        need = [want for _, want in wanted]

        def next_round() -> list[tuple[int, list[CommitMeta]]]:
            return [(n, b) for n in range(len(wanted)) if need[n] > 0 and (b := list(itertools.islice(waiting[n], need[n])))]

        while batches := next_round():
            asked = [meta for _, batch in batches for meta in batch]
            reasons = iter(many(asked) if many else [check(meta) for meta in asked])
            for n, batch in batches:
                for meta in batch:
                    reason = next(reasons)
                    if reason:
                        dropped[reason] += 1
                        refused.add(meta.sha)
                        continue
                    taken.add(meta.sha)
                    observed = (mined_at - meta.committer_time) // 86400
                    where = "/".join(stratum(meta, config))
                    picks.append(CleanPick(sha=meta.sha, observed_days=observed, stratum=where, fix_nearby=nearby[meta.sha]))
                    need[n] -= 1

    opened = 0
    for eligible, groups in drawn:
        if opened and len(picks) >= count:
            break
        opened += 1
        strata = _still_wanted(quotas, groups, picks, count)
        if many:  # every stratum's first round at once
            take(strata)
        else:  # one at a time, in the order the checks were planned (they run ahead in that order)
            for one in strata:
                take([one])
        take([(eligible, count - len(picks))])  # fill what the strata could not, in seeded order
    left = sum(len(eligible) for eligible, _ in drawn[:opened]) - len(taken) - len(refused)
    if left:
        dropped["not_sampled"] += left
    unreached = sum(len(eligible) for eligible, _ in drawn[opened:])
    if unreached:
        dropped["fix_followed_nearby"] += unreached
    return sorted(picks, key=lambda p: sample_order(p.sha, config.seed))


def _still_wanted(
    quotas: list[tuple[Stratum, int]], groups: dict[Stratum, list[CommitMeta]], picks: list[CleanPick], count: int
) -> list[tuple[list[CommitMeta], int]]:
    """Each stratum's candidates and how many more of it are wanted: its share less what it has (an
    earlier tier's fill may have taken more than its share), no more in all than ``count`` still wants."""
    have = Counter(p.stratum for p in picks)
    left = count - len(picks)
    wanted: list[tuple[list[CommitMeta], int]] = []
    for group, share in quotas:
        want = max(0, min(share - have["/".join(group)], left))
        left -= want
        wanted.append((groups.get(group, []), want))
    return wanted


def _asking_order(
    eligible: list[CommitMeta], groups: dict[Stratum, list[CommitMeta]], quotas: list[tuple[Stratum, int]]
) -> list[CommitMeta]:
    return [meta for group, _ in quotas for meta in groups.get(group, [])] + eligible


def _drawn(candidates: list[CommitMeta], config: Config) -> tuple[list[CommitMeta], dict[Stratum, list[CommitMeta]]]:
    """Candidates in seeded order, and grouped by stratum in that order."""
    eligible = sorted(candidates, key=lambda m: sample_order(m.sha, config.seed))
    groups: dict[Stratum, list[CommitMeta]] = {}
    for meta in eligible:
        groups.setdefault(stratum(meta, config), []).append(meta)
    return eligible, groups
