"""Pure decisions about commits and paths, driven by the config: no git, no clock."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

from miner.config import Config, FixesConfig, PathsConfig
from miner.records import CommitMeta, LinkKind

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
_KINDS: tuple[tuple[PathKind, str], ...] = (("vendored", "vendored"), ("generated", "generated"),
                                          ("lockfile", "lockfiles"), ("config", "config"),
                                          ("tests", "tests"), ("docs", "docs"))


def path_kind(path: str, paths: PathsConfig) -> PathKind:
    """What a path holds, by the first group of globs in ``paths`` that matches it."""
    for kind, field in _KINDS:
        if _matches(path, getattr(paths, field)):
            return kind
    return "source"


def has_generated_marker(head: bytes, paths: PathsConfig) -> bool:
    """True when the first lines of a file say it was generated."""
    text = head[:2048].decode("utf-8", "replace")
    return any(marker in text for marker in paths.generated_markers)


def is_bot(meta: CommitMeta, config: Config) -> bool:
    return any(re.search(p, meta.author_name, re.I) or re.search(p, meta.author_email, re.I)
               for p in config.bots.patterns)


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
