"""How many of a build's fixtures are true (the measuring tool of ``scripts/bench_validity.py``; not part of
the installed library), against fixtures people (or helpers) read one by one.

An adjudicated set (``validity/`` in this repository) holds verdicts made with the rubric in
ADJUDICATION.md, keyed by commit ids (never fixture ids, which change with the configuration):

- a bug verdict judges one (change, fix) pair: is the fix a bug fix, did the change introduce the
  defect, are the marked lines right. The pair is **valid** when all three hold;
- a clean verdict judges one change: is it a plausible pull request, did a later commit fix it, does
  it hold a real defect. It is **valid** when it is plausible, never fixed and holds none.

A bug fixture is adjudicated when every fix it names has a verdict for its change, and valid when
one of them is valid (the others then make its marking "partly" right). **Validity** is the share
of adjudicated fixtures that are valid; **retention** is the share of the valid fixtures the
sampled baseline emitted (the draw ``baseline`` of the repository's entry names, among the ``sampled_from``
of the verdicts: miner 0.2.0's default output, or for the held-out repositories the first draw read) that the
build still emits; for clean candidates, the share of the valid ones of the baseline's sample that are still
eligible.
Intervals are Wilson's, at 95%. What makes a reading valid, the intervals and the seeded order of a draw are
``miner validity``'s (``miner.is_valid``, ``miner.Rate``, ``miner.draw_order``): the figures here and a team's
own ``miner validity score`` are computed the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict

from miner import MinerError, Rate, draw_order, is_valid, open_output


class _Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BugVerdict(_Verdict):
    repository: str
    change: str
    fixes: tuple[str, ...]
    fix_is_bugfix: Literal["yes", "no", "unsure"]
    defect_in_change: Literal["introduced", "carried", "not_present", "unsure"]
    lines_right: Literal["yes", "partly", "no", "n/a"]
    reviewable: Literal["yes", "hard", "no"]
    hint: Literal["ok", "leak", "garbled"]
    defect: str
    note: str = ""
    sampled_from: str

    @property
    def valid(self) -> bool:
        return is_valid("bug", self.model_dump())


class CleanVerdict(_Verdict):
    repository: str
    change: str
    plausible_pr: Literal["yes", "no"]
    later_fixed: Literal["yes", "no", "unsure"]
    later_fix: str = ""
    real_defect: Literal["yes", "no", "unsure"]
    note: str = ""
    sampled_from: str

    @property
    def valid(self) -> bool:
        return is_valid("clean", self.model_dump())


Role = Literal["tune", "seen", "heldout", "unseen", "fresh", "late"]
ROLES: tuple[Role, ...] = get_args(Role)  # in the order the repositories were first read


class RepositoryEntry(_Verdict):
    name: str
    url: str
    language: str
    role: Role
    fixes_trailers: bool
    head: str
    # The draws retention is measured against: the valid fixtures of these samples that a build still emits.
    baseline: str = "0.2.0-default"
    clean_baseline: str = "0.2.0-clean-eligible"


@dataclass(frozen=True)
class Adjudicated:
    repositories: tuple[RepositoryEntry, ...]
    bugs: tuple[BugVerdict, ...]
    clean: tuple[CleanVerdict, ...]


def load(folder: Path) -> Adjudicated:
    """The adjudicated set in ``folder`` (``repositories.yaml``, ``bugs.jsonl``, ``clean.jsonl``)."""
    try:
        repos = yaml.safe_load((folder / "repositories.yaml").read_text(encoding="utf-8"))["repositories"]
        bugs = [json.loads(line) for line in (folder / "bugs.jsonl").read_text(encoding="utf-8").splitlines() if line]
        clean = [json.loads(line) for line in (folder / "clean.jsonl").read_text(encoding="utf-8").splitlines() if line]
        return Adjudicated(
            tuple(RepositoryEntry.model_validate(r) for r in repos),
            tuple(BugVerdict.model_validate(b) for b in bugs),
            tuple(CleanVerdict.model_validate(c) for c in clean),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MinerError(
            f"cannot read the adjudicated set in {folder}: {exc}; give the validity/ folder of miner's repository"
        ) from exc


@dataclass(frozen=True)
class Emitted:
    """What a build emitted for one repository: bug fixtures (change -> the fixes its defects name)
    and clean fixtures (changes)."""

    bugs: Mapping[str, frozenset[str]]
    clean: frozenset[str]
    # How near a fix followed each clean fixture the sample took past clean.fix_window_scope ("file",
    # "directory"); the others are not here.
    nearby: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Score:
    repository: str
    role: str
    bug_total: int = 0
    bug_emitted: int = 0
    bug_adjudicated: int = 0
    bug_valid: int = 0
    bug_baseline_valid: int = 0
    bug_kept: int = 0
    baseline: Rate = Rate(0, 0)
    clean_emitted: int = 0
    clean_adjudicated: int = 0
    clean_valid: int = 0
    clean_pool_valid: int = 0
    clean_kept: int = 0
    clean_baseline: Rate = Rate(0, 0)
    invalid: list[str] = field(default_factory=list)
    # The drawn clean fixtures by how near a fix followed them ("none", "directory", "file"): how many were
    # drawn, adjudicated and valid.
    clean_tiers: dict[str, list[int]] = field(default_factory=dict)

    @property
    def validity(self) -> Rate:
        return Rate(self.bug_valid, self.bug_adjudicated)

    @property
    def retention(self) -> Rate:
        return Rate(self.bug_kept, self.bug_baseline_valid)

    @property
    def clean_validity(self) -> Rate:
        return Rate(self.clean_valid, self.clean_adjudicated)

    @property
    def clean_retention(self) -> Rate:
        return Rate(self.clean_kept, self.clean_pool_valid)


def sample(changes: Iterable[str], size: int | None, seed: str) -> list[str]:
    """A seeded uniform sample of ``size`` changes (all of them when None): those whose salted hash is
    smallest, so a build that drops a few keeps the rest of its sample and draws the next ones in."""
    ordered = sorted(changes, key=lambda c: draw_order(c, seed))
    return ordered if size is None else ordered[:size]


def score(
    entry: RepositoryEntry,
    emitted: Emitted,
    bugs: Iterable[BugVerdict],
    clean: Iterable[CleanVerdict],
    size: int | None = None,
    seed: str = "validity",
) -> Score:
    """Validity and retention of what a build emitted for one repository; with ``size``, validity is
    measured on a seeded uniform sample of that many bug and clean fixtures (``sample``)."""
    pairs = {(v.change, fix): v for v in bugs if v.repository == entry.url for fix in v.fixes}
    result = Score(repository=entry.name, role=entry.role)
    drawn = set(sample(emitted.bugs, size, f"{seed}:{entry.name}"))
    result.bug_total = len(emitted.bugs)
    for change, fixes in sorted(emitted.bugs.items()):
        if change not in drawn:
            continue
        result.bug_emitted += 1
        verdicts = [pairs.get((change, fix)) for fix in sorted(fixes)]
        if not verdicts or any(v is None for v in verdicts):
            continue
        result.bug_adjudicated += 1
        if any(v.valid for v in verdicts if v is not None):
            result.bug_valid += 1
        else:
            result.invalid.append(f"{change[:12]} <- {','.join(f[:12] for f in sorted(fixes))}")
    baseline: dict[str, list[BugVerdict]] = {}
    for v in pairs.values():
        if v.sampled_from == entry.baseline:
            baseline.setdefault(v.change, []).append(v)
    result.baseline = Rate(sum(any(v.valid for v in vs) for vs in baseline.values()), len(baseline))
    for change, judged in baseline.items():
        good = {fix for v in judged if v.valid for fix in v.fixes}
        if good:
            result.bug_baseline_valid += 1
            result.bug_kept += bool(good & emitted.bugs.get(change, frozenset()))
    mine = [v for v in clean if v.repository == entry.url]
    by_change = {v.change: v for v in mine}
    pool = [v for v in mine if v.sampled_from == entry.clean_baseline]
    result.clean_baseline = Rate(sum(v.valid for v in pool), len(pool))
    for change in sorted(sample(emitted.clean, size, f"{seed}:{entry.name}:clean")):
        result.clean_emitted += 1
        tier = result.clean_tiers.setdefault(emitted.nearby.get(change, "none"), [0, 0, 0])
        tier[0] += 1
        verdict = by_change.get(change)
        if verdict is not None:
            result.clean_adjudicated += 1
            result.clean_valid += verdict.valid
            tier[1] += 1
            tier[2] += verdict.valid
    result.clean_pool_valid = sum(v.valid for v in pool)
    result.clean_kept = sum(v.valid and v.change in emitted.clean for v in pool)
    return result


def emitted(out: Path, repository: str) -> Emitted:
    """The fixtures a build output holds for ``repository`` (its name in the manifest)."""
    bugs: dict[str, frozenset[str]] = {}
    clean: set[str] = set()
    nearby: dict[str, str] = {}
    for answer in open_output(out).answers():
        if answer.repository != repository:
            continue
        if answer.kind == "bug":
            bugs[answer.head] = frozenset(d.fix for d in answer.defects or ())
        else:
            clean.add(answer.head)
            if answer.fix_nearby:
                nearby[answer.head] = answer.fix_nearby
    return Emitted(bugs=bugs, clean=frozenset(clean), nearby=nearby)


def total(scores: Iterable[Score]) -> Score:
    """The sum of several repositories' scores."""
    out = Score(repository="all", role="")
    base_k = base_n = cb_k = cb_n = 0
    for s in scores:
        for name in (
            "bug_total",
            "bug_emitted",
            "bug_adjudicated",
            "bug_valid",
            "bug_baseline_valid",
            "bug_kept",
            "clean_emitted",
            "clean_adjudicated",
            "clean_valid",
            "clean_pool_valid",
            "clean_kept",
        ):
            setattr(out, name, getattr(out, name) + getattr(s, name))
        base_k, base_n = base_k + s.baseline.k, base_n + s.baseline.n
        for tier, counts in s.clean_tiers.items():
            mine = out.clean_tiers.setdefault(tier, [0, 0, 0])
            mine[:] = [a + b for a, b in zip(mine, counts)]
        cb_k, cb_n = cb_k + s.clean_baseline.k, cb_n + s.clean_baseline.n
    out.baseline, out.clean_baseline = Rate(base_k, base_n), Rate(cb_k, cb_n)
    return out
