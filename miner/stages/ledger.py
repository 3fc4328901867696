"""The split ledger: which fixture is in which split, kept across rebuilds.

A rebuild adds fixtures and never moves one that the ledger already places; only an
explicit ``miner split refresh`` moves fixtures, and it records when, why and what.
Families (fixtures sharing an introducing commit, a fix, or a patch-id) always share one
split: when their members would land in different splits, held-out wins, so nothing the
held-out set depends on can be seen in dev.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

LEDGER = "ledger.json"


class Placement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    split: str
    repository: str
    family: str


class RefreshEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    date: str
    reason: str
    retired: tuple[str, ...]


class Ledger(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    placements: dict[str, Placement] = {}
    refreshes: tuple[RefreshEvent, ...] = ()


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


def updated(ledger: Ledger, splits: dict[str, str], repos: dict[str, str], family: dict[str, str]) -> Ledger:
    placements = dict(ledger.placements)
    for fid in sorted(splits):
        placements[fid] = Placement(split=splits[fid], repository=repos[fid], family=family[fid])
    return Ledger(placements=dict(sorted(placements.items())), refreshes=ledger.refreshes)


def refresh(ledger: Ledger, retire: set[str], date: dt.date, reason: str) -> Ledger:
    """Move the retired held-out fixtures, and their whole families, to dev; record the event."""
    fams = {ledger.placements[f].family for f in retire if f in ledger.placements}
    moved = sorted(f for f, p in ledger.placements.items() if p.family in fams and p.split == "heldout")
    placements = {f: (p.model_copy(update={"split": "dev"}) if f in moved else p) for f, p in ledger.placements.items()}
    event = RefreshEvent(date=date.isoformat(), reason=reason, retired=tuple(moved))
    return Ledger(placements=placements, refreshes=(*ledger.refreshes, event))


def to_json(ledger: Ledger) -> dict[str, Any]:
    return ledger.model_dump(mode="json")
