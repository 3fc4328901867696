"""Stage 6: assign splits, families and freshness.

A repository is wholly held out or wholly dev: an explicit list in the config, or a stable
salted hash of the repository's identity (its root commit), so every machine makes the same
choice whatever the clock, time zone or order of arguments. No family of fixtures (shared
introducing commit, shared fix, same patch) straddles splits: when the members of a family would
land in different splits, held-out wins, so nothing the held-out set depends on can be seen in
dev. A fixture the ledger (``miner.stages.ledger``) already places keeps its split.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from miner.core.config import SplitConfig
from miner.stages.ledger import Ledger


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


class _Families:
    """Union-find over fixture ids."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def families(members: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Fixture id -> family id, where fixtures sharing any key (a fix SHA, a patch-id) are one family.

    The family id is the smallest fixture id in it, so it does not depend on iteration order.
    """
    uf = _Families()
    owner: dict[str, str] = {}
    for fid in sorted(members):
        uf.find(fid)
        for key in sorted(set(members[fid])):
            if key in owner:
                uf.union(owner[key], fid)
            else:
                owner[key] = fid
    return {fid: uf.find(fid) for fid in members}


def assign(proposed: dict[str, tuple[str, str]], family: dict[str, str], ledger: Ledger) -> tuple[dict[str, str], int]:
    """Final split per fixture id from (proposed split, repository); returns (splits, moved by family rule).

    A fixture the ledger knows keeps its split. Otherwise its family decides: a family with
    any member held out (in the ledger or proposed) is held out.
    """
    heldout_families = {family[f] for f, (split, _) in proposed.items() if split == "heldout"}
    heldout_families |= {family[f] for f, p in ledger.placements.items() if f in family and p.split == "heldout"}
    splits: dict[str, str] = {}
    moved = 0
    for fid, (split, _repo) in sorted(proposed.items()):
        if fid in ledger.placements:
            splits[fid] = ledger.placements[fid].split
            continue
        final = "heldout" if family[fid] in heldout_families else split
        moved += final != split
        splits[fid] = final
    return splits, moved


@dataclass(frozen=True)
class Member:
    """A fixture as the split stage sees it: the split its repository proposes, the repository,
    and the keys it shares with its family (see ``family_keys``)."""

    split: str
    repository: str
    keys: tuple[str, ...]


def family_keys(head: str, fixes: Iterable[str], patch_id: str | None) -> tuple[str, ...]:
    """What joins fixtures into a family: its commit, the fixes of its defects, its patch-id. One
    namespace for a fixture's own commit and the fixes: a fix that is itself a fixture's change
    joins the two (a dev answer naming it would describe a held-out change)."""
    commits = [head, *fixes]
    return tuple(f"commit:{c}" for c in commits) + ((f"patch:{patch_id}",) if patch_id is not None else ())


def assign_splits(members: Mapping[str, Member], ledger: Ledger) -> tuple[dict[str, str], dict[str, str]]:
    """Fixture id -> its split, and fixture id -> its family."""
    family = families({fid: m.keys for fid, m in members.items()})
    splits, _moved = assign({fid: (m.split, m.repository) for fid, m in members.items()}, family, ledger)
    return splits, family
