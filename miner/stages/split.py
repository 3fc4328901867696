"""Stage 5: assign splits and freshness.

A repository is wholly held out or wholly dev, so no family of fixtures (shared introducing
commit, shared fix, same patch) can straddle splits. The choice is an explicit list in the
config, or a stable salted hash of the repository's identity (its root commit), so every
machine makes the same choice whatever the clock, time zone or order of arguments.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from miner.core.config import SplitConfig


def repository_split(name: str, identity: str, config: SplitConfig) -> str:
    if name in config.heldout:
        return "heldout"
    digest = hashlib.sha256(f"{config.salt}:{identity}".encode()).digest()
    share = int.from_bytes(digest[:8], "big") / 2**64
    return "heldout" if share < config.heldout_fraction else "dev"


def freshness(landed: dt.datetime, config: SplitConfig) -> dict[str, bool]:
    """For each named training cutoff, whether the change landed after it (UTC)."""
    day = landed.astimezone(dt.timezone.utc).date()
    return {name: day > cutoff for name, cutoff in sorted(config.cutoffs.items())}
