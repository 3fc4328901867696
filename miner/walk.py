"""Stage 1: walk history and pick out the commits that fix something.

Takes commit metadata as git streams it and yields ``FixCommit`` records. Decisions are
pure (message and config); resolving a named SHA is passed in, so this runs without git.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from miner.classify import fix_link, is_bot
from miner.config import Config
from miner.records import CommitMeta, FixCommit


def find_fixes(commits: Iterable[CommitMeta], config: Config, expand: Callable[[str], str | None],
               dropped: Counter[str]) -> Iterator[FixCommit]:
    """Yield each commit whose message marks it as a fix; count what was refused and why."""
    for meta in commits:
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
