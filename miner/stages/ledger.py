"""The split ledger: which fixture is in which split, kept across rebuilds.

A rebuild adds fixtures and never moves one that the ledger already places; only an
explicit ``miner split refresh`` moves fixtures, and it records when, why and what.
The split stage (``miner.stages.split``) decides where a new fixture goes; the ledger keeps it.
"""

from __future__ import annotations

import datetime as dt
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
