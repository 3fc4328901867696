"""Stage 1: walk history and pick out the commits that fix something.

Takes commit metadata as git streams it and yields ``FixCommit`` records. Decisions are
pure (message and config); resolving a named SHA is passed in, so this runs without git.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from miner.core.classify import fix_link, is_bot, reapplies
from miner.core.config import Config
from miner.core.records import CommitMeta, FixCommit


def find_fixes(
    commits: Iterable[CommitMeta], config: Config, expand: Callable[[str], str | None], dropped: Counter[str]
) -> Iterator[FixCommit]:
    """Yield each commit whose message marks it as a fix; count what was refused and why.

    A revert of a revert re-lands the original change: it repairs nothing, so it is not a fix.
    """
    commits = list(commits)
    by_sha = {m.sha: m for m in commits}
    for meta in commits:
        if reapplies(meta, by_sha.get, config.fixes):
            dropped["revert_of_revert"] += 1
            continue
        link, prefixes, rejected = fix_link(meta.message, config.fixes)
        if config.labels.blame_only and link in ("trailer", "revert"):
            link, prefixes = "keyword", ()
        if link is None:
            if rejected:
                dropped[rejected] += 1
            continue
        if is_bot(meta, config):
            dropped["bot_author"] += 1
            continue
        named: list[str] = []
        for prefix in prefixes:
            full = expand(prefix)
            if full is None:
                dropped["link_unknown_commit"] += 1
            elif full != meta.sha:
                named.append(full)
        if link != "keyword" and not named:
            # The message names a culprit we cannot find (a cherry-pick from another
            # branch, a shallow clone): fall back to blame, which is weaker.
            link = "keyword"
        yield FixCommit(meta=meta, link=link, named=tuple(named))
