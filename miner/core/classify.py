"""Pure decisions about commits and paths, driven by the config: no git, no clock."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Literal

from miner.core.config import Config, FixesConfig, PathsConfig
from miner.core.records import CommitMeta, LinkKind

PathKind = Literal["source", "docs", "tests", "vendored", "generated", "lockfile", "config"]


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    # '**/' may also match nothing, so '**/*.md' covers a top-level README.md.
    regex = fnmatch.translate(pattern)
    if pattern.startswith("**/"):
        regex = f"(?:{regex}|{fnmatch.translate(pattern[3:])})"
    return re.compile(regex)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression of one path glob, as ``paths`` globs are matched."""
    return _glob(pattern)


@lru_cache(maxsize=64)
def _any_glob(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regular expression for a group of globs: a path is matched once, not once a glob."""
    return re.compile("|".join(f"(?:{_glob(p).pattern})" for p in patterns)) if patterns else None


def _matches(path: str, patterns: list[str]) -> bool:
    regex = _any_glob(tuple(patterns))
    return regex is not None and regex.match(path) is not None


# Checked in this order: vendored and generated win over tests and docs.
_KINDS: tuple[tuple[PathKind, str], ...] = (
    ("vendored", "vendored"),
    ("generated", "generated"),
    ("lockfile", "lockfiles"),
    ("config", "config"),
    ("tests", "tests"),
    ("docs", "docs"),
)


def path_kind(path: str, paths: PathsConfig) -> PathKind:
    """What a path holds, by the first group of globs in ``paths`` that matches it.

    Every stage asks this of the same paths again and again: each configuration keeps the answers
    it gave (the configuration is frozen, and held here, so its id names it for as long as it lives)."""
    entry = _KIND_ANSWERS.get(id(paths))
    if entry is None or entry[0] is not paths:
        entry = _KIND_ANSWERS[id(paths)] = (paths, {})
    answers = entry[1]
    kind = answers.get(path)
    if kind is None:
        if len(answers) >= _KIND_ANSWERS_KEPT:
            answers.clear()
        kind = answers[path] = next((kind for kind, field in _KINDS if _matches(path, getattr(paths, field))), "source")
    return kind


_KIND_ANSWERS: dict[int, tuple[PathsConfig, dict[str, PathKind]]] = {}
_KIND_ANSWERS_KEPT = 200_000


def has_generated_marker(head: bytes, paths: PathsConfig) -> bool:
    """True when the first lines of a file say it was generated."""
    text = head[:2048].decode("utf-8", "replace")
    return any(marker in text for marker in paths.generated_markers)


def is_bot(meta: CommitMeta, config: Config) -> bool:
    return any(re.search(p, meta.author_name, re.I) or re.search(p, meta.author_email, re.I) for p in config.bots.patterns)


@lru_cache(maxsize=8)
def _keyword_regex(keywords: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in keywords) + r")\b", re.I)


def has_fix_word(text: str, fixes: FixesConfig) -> bool:
    """Whether ``text`` holds one of the fix keywords as a whole word."""
    return _keyword_regex(tuple(fixes.keywords)).search(text) is not None


def trailer_shas(message: str, fixes: FixesConfig) -> tuple[str, ...]:
    """The SHA prefixes a message's trailers name as the commit it repairs (``Fixes: <sha>`` and kin)."""
    named: list[str] = []
    for pattern in fixes.link_patterns:
        named += re.findall(pattern, message, re.I | re.M)
    return tuple(dict.fromkeys(s.lower() for s in named))


def reverted_shas(message: str, fixes: FixesConfig) -> tuple[str, ...]:
    """The SHAs (or prefixes) a revert's message says it reverts; empty for any other commit."""
    return tuple(dict.fromkeys(s.lower() for s in re.findall(fixes.revert_pattern, message)))


def reapplies(meta: CommitMeta, lookup: Callable[[str], CommitMeta | None], fixes: FixesConfig) -> str | None:
    """The original commit a revert of a revert re-applies, or None.

    Only a revert naming one full SHA, of a revert naming one full SHA, both in the history
    read: an abbreviated or ambiguous chain is left alone.
    """
    first = reverted_shas(meta.message, fixes)
    if len(first) != 1 or len(first[0]) != 40 or (undone := lookup(first[0])) is None:
        return None
    second = reverted_shas(undone.message, fixes)
    if len(second) != 1 or len(second[0]) != 40 or lookup(second[0]) is None:
        return None
    return second[0]


def fix_link(message: str, fixes: FixesConfig) -> tuple[LinkKind | None, tuple[str, ...], str | None]:
    """Whether a message marks a fix: (how, SHA prefixes it names, why it was rejected).

    Explicit links (a revert, a trailer naming a SHA) are fixes whatever their words; a
    message is a keyword fix when a keyword appears as a word and the subject is not on
    the reject list.
    """
    reverted = reverted_shas(message, fixes)
    if reverted:
        return "revert", reverted, None
    named = trailer_shas(message, fixes)
    if named:
        return "trailer", named, None
    if not _keyword_regex(tuple(fixes.keywords)).search(message):
        return None, (), None
    subject = message.strip().split("\n", 1)[0].strip()
    for pattern in fixes.reject_subjects:
        if re.search(pattern, subject, re.I):
            return None, (), "rejected_subject"
    return "keyword", (), None


_SCOPES = re.compile(r"^([\w./()-]+:\s+)+")


def plain_subject(message: str) -> str:
    """A commit's subject without its "scope:" prefixes ("libmultipath: nvme: update to ...")."""
    return _SCOPES.sub("", message.split("\n", 1)[0].strip())


def vendored_trees(metas: Iterable[CommitMeta], paths: PathsConfig) -> list[str]:
    """Globs of the trees that commits copying in a third party's code changed (``paths.vendor_syncs``):
    "Update urllib3 to 1.13", whose files all lie under requests/packages/urllib3/, makes that
    directory vendored. The tree is the deepest directory (or file) of the commit's common path
    that its subject names. A tree that other commits change more than ``max_local_per_sync``
    times as often as syncs do is the project's own code ("ocp: update ocp v2.6 log page")."""
    sync = paths.vendor_syncs
    verbs, upstream = re.compile(sync.verbs, re.I), re.compile(sync.upstream, re.I)
    metas = list(metas)
    syncs: dict[str, set[str]] = {}
    for meta in metas:
        subject = plain_subject(meta.message).lower()
        if not verbs.search(subject) or not upstream.search(subject) or _OWN_VERSION.search(subject):
            continue
        files = [f.path for f in meta.files if path_kind(f.path, paths) in ("source", "tests", "vendored", "generated")]
        tree = _named_tree(files, subject)
        if tree:
            syncs.setdefault(tree, set()).add(meta.sha)
    # A directory holding two trees that syncs changed is a vendor directory (requests/packages).
    children: dict[str, set[str]] = {}
    for tree in syncs:
        if "/" in tree:
            children.setdefault(tree.rsplit("/", 1)[0], set()).add(tree)
    for parent, trees in children.items():
        if len(trees) > 1:
            syncs.setdefault(parent, set()).update(*(syncs[t] for t in trees))
    local: Counter[str] = Counter()
    for m in metas:
        under = {"/".join(parts[:n]) for f in m.files for parts in [f.path.split("/")] for n in range(1, len(parts) + 1)}
        local.update(t for t in under & syncs.keys() if m.sha not in syncs[t])
    found = {tree for tree, shas in syncs.items() if local[tree] <= sync.max_local_per_sync * len(shas)}
    single = {f.path for m in metas for f in m.files if f.path in found}  # trees that are one file
    return [
        re.sub(r"([*?[])", r"[\1]", tree) + ("" if tree in single else "/**")
        for tree in sorted(found)
        if not any(_under(tree, other) for other in found - {tree})
        and path_kind(tree if tree in single else tree + "/x", paths) != "vendored"
    ]  # not already vendored


_OWN_VERSION = re.compile(r"\bversion\b")  # "bump version to 0.9": the project's own release


def _under(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree + "/")


def _named_tree(files: list[str], subject: str) -> str | None:
    """The deepest part of the files' common path that the subject names as a word, or None."""
    if not files:
        return None
    parts = files[0].split("/") if len(set(files)) == 1 else posixpath.commonpath(files).split("/")
    for depth in range(len(parts), 0, -1):
        name = parts[depth - 1].lower()
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        if len(stem) >= 3 and re.search(rf"(?<!\w){re.escape(stem)}(?!\w)", subject):
            return "/".join(parts[:depth])
    return None


def with_vendored(config: Config, metas: Iterable[CommitMeta]) -> tuple[Config, list[str]]:
    """The config with the trees ``vendored_trees`` finds in this history added to ``paths.vendored``."""
    found = vendored_trees(metas, config.paths)
    if not found:
        return config, []
    paths = config.paths.model_copy(update={"vendored": [*config.paths.vendored, *found]})
    return config.model_copy(update={"paths": paths}), found
