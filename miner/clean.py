"""Stage 3: pick clean commits: changes that nothing later fixed or reverted.

A candidate must look like a pull request a reviewer could be handed (source code changed,
not a merge, not the initial import, not a bot's, not a pure reformat, not too large), must
not be blamed or named by any fix at any tier, and must have been observed for the waiting
window: a change younger than that may hold a bug nobody has found yet. The sample is
seeded: the same seed, repository and config always pick the same commits.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable

from miner.classify import is_bot, path_kind
from miner.config import Config
from miner.records import CleanPick, CommitMeta


def why_not_clean(meta: CommitMeta, config: Config, mined_at: int, blamed: set[str],
                  fixes: set[str]) -> str | None:
    """The first reason a commit cannot be a clean fixture, or None. Cheap checks only."""
    if not meta.parents:
        return "initial_import"
    if is_bot(meta, config):
        return "bot_author"
    if meta.sha in fixes:
        return "is_fix"
    if meta.sha in blamed:
        return "blamed_by_fix"
    if not source_paths(meta, config):
        return "no_source_change"
    if meta.changed_lines > config.clean.max_changed_lines:
        return "too_large"
    if (mined_at - meta.committer_time) < config.clean.wait_days * 86400 and not config.clean.admit_young:
        return "too_young"
    return None


def sample_order(sha: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{sha}".encode()).hexdigest()


def wanted(bugs: int, config: Config) -> int:
    return min(config.clean.max_count, max(config.clean.min_count, math.ceil(bugs * config.clean.ratio)))


def source_paths(meta: CommitMeta, config: Config) -> list[str]:
    return [f.path for f in meta.files if path_kind(f.path, config.paths) == "source" and not f.binary]


def pick_clean(commits: Iterable[CommitMeta], count: int, config: Config, mined_at: int,
               blamed: set[str], fixes: set[str], is_cosmetic: Callable[[str], bool],
               dropped: Counter[str], is_generated: Callable[[str, str], bool] = lambda sha, path: False,
               ) -> list[CleanPick]:
    """A seeded sample of ``count`` clean commits; counts every refused candidate by reason.

    The checks that need git (whitespace-only, generated headers) run only on the commits
    the sample reaches, in sample order.
    """
    eligible: list[CommitMeta] = []
    for meta in commits:
        reason = why_not_clean(meta, config, mined_at, blamed, fixes)
        if reason:
            dropped[reason] += 1
        else:
            eligible.append(meta)
    eligible.sort(key=lambda m: sample_order(m.sha, config.seed))
    picks: list[CleanPick] = []
    for meta in eligible:
        if len(picks) >= count:
            dropped["not_sampled"] += 1
            continue
        if is_cosmetic(meta.sha):
            dropped["whitespace_only"] += 1
            continue
        if all(is_generated(meta.sha, path) for path in source_paths(meta, config)):
            dropped["generated_only"] += 1
            continue
        picks.append(CleanPick(sha=meta.sha, observed_days=(mined_at - meta.committer_time) // 86400))
    return picks
