"""``miner calibrate``: how far miner's labels can be trusted, on ground truth nobody here wrote.

Many projects name the commit a fix repairs in a trailer (``Fixes: <sha>``, curl's
``Regression from <sha>``). A trailer fix is *in scope* when the named commit is an ancestor
of the fix and the fix removes or changes at least one line of a file that commit touched.
The labeller runs blind to the trailers (``labels.blame_only``) on exactly those fixes, and
each (fix, named commit) pair is scored: a label is right when its introducing commit is one
the trailer named.

Scoring (``score``) is a pure function of the truth and the labels; ``calibrate`` reads the
repository. ``benchmark`` and ``label_fix`` give a benchmark (``scripts/bench_szz.py``) the same
fixes and the same labeller.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tqdm import tqdm

from miner.core.classify import trailer_shas
from miner.core.config import TIERS, Config, Tier
from miner.core.errors import MinerError, MissingObjectError
from miner.core.records import CommitMeta, FileDiff, FixCommit, Label
from miner.git import Repo
from miner.stages.baseline import pydriller_szz
from miner.stages.blame import label_fixes, tier_allowed
from miner.stages.vet import NO_SOURCE, vet_fix, vet_fixes
from miner.stages.walk import find_fixes

MIN_IN_SCOPE = 20


class TooFewTrailersError(MinerError):
    """The repository has too few in-scope trailer fixes to measure anything."""


@dataclass(frozen=True)
class Truth:
    """One in-scope trailer fix and the commits its trailers name (those in scope)."""

    fix: str
    named: tuple[str, ...]


def scope(
    meta: CommitMeta,
    diffs: list[FileDiff],
    named: Iterable[str | None],
    lookup: Callable[[str], CommitMeta | None],
    is_ancestor: Callable[[str, str], bool],
    dropped: Counter[str],
) -> Truth | None:
    """The fix as ground truth, keeping the named commits it can be scored against; None if none."""
    changed = {d.old_path for d in diffs if d.old_path is not None and d.removed}
    kept: list[str] = []
    for sha in named:
        if sha is None:
            dropped["trailer_unknown_commit"] += 1
            continue
        target = lookup(sha)
        if sha == meta.sha or target is None:
            dropped["trailer_names_merge_or_unwalked"] += 1
        elif not is_ancestor(sha, meta.sha):
            dropped["trailer_not_ancestor"] += 1
        elif not changed & {f.path for f in target.files}:
            dropped["trailer_no_shared_changed_file"] += 1
        else:
            kept.append(sha)
    return Truth(fix=meta.sha, named=tuple(dict.fromkeys(kept))) if kept else None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


@dataclass(frozen=True)
class Score:
    """Labels of some tiers against the truth."""

    tiers: tuple[Tier, ...]
    fixes: int  # in-scope fixes
    pairs: int  # in-scope (fix, named commit) pairs
    labels: int  # labels made at these tiers
    correct: int  # of those, naming a commit the trailer named
    labelled_fixes: int  # fixes with at least one label at these tiers

    @property
    def precision(self) -> float | None:
        return _ratio(self.correct, self.labels)

    @property
    def recall(self) -> float | None:
        return _ratio(self.correct, self.pairs)

    @property
    def yield_(self) -> float | None:
        return _ratio(self.labelled_fixes, self.fixes)

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "tiers": list(self.tiers),
            "pairs": self.pairs,
            "labels": self.labels,
            "correct": self.correct,
            "labelled_fixes": self.labelled_fixes,
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "yield": _round(self.yield_),
            "f1": _round(self.f1),
        }


def score(truths: Mapping[str, Truth], labels: Iterable[Label], tiers: Iterable[Tier]) -> Score:
    """Score the labels whose tier is in ``tiers`` against the in-scope truth."""
    wanted = tuple(tiers)
    made = correct = 0
    labelled: set[str] = set()
    for lab in labels:
        truth = truths.get(lab.fix)
        if truth is None or lab.intro is None or lab.tier not in wanted:
            continue
        made += 1
        correct += lab.intro in truth.named
        labelled.add(lab.fix)
    return Score(
        tiers=wanted,
        fixes=len(truths),
        pairs=sum(len(t.named) for t in truths.values()),
        labels=made,
        correct=correct,
        labelled_fixes=len(labelled),
    )


PRECISION_BAR = 0.90  # the precision the default output is held to


@dataclass(frozen=True)
class Ceiling:
    """How far any gate on today's answers could go: the bounds behind the tiers' figures.

    A better confidence rule can only choose among the answers the labeller gives. Knowing
    exactly which of them are right, it could keep every right one and, at ``PRECISION_BAR``,
    one wrong one for every nine right; that yield, and the F1 of keeping only right answers,
    are upper bounds for any tier rule. ``in_reach`` counts the fixes where blame reached a
    named commit at all, right answer or not: the bound for any rule that picks among blame's
    candidates.
    """

    fixes: int
    pairs: int
    in_reach: int  # fixes where a named commit is among blame's candidates
    answered_right: int  # fixes with a label (any tier) naming a commit the trailer named
    answered_wrong: int  # fixes labelled, none of whose labels is right
    right_pairs: int  # (fix, named commit) pairs some label names

    def yield_at(self, precision: float) -> float | None:
        wrong_allowed = min(self.answered_wrong, math.floor(self.answered_right * (1 - precision) / precision + 1e-9))
        return _ratio(self.answered_right + wrong_allowed, self.fixes)

    @property
    def f1_gated(self) -> float | None:
        recall = _ratio(self.right_pairs, self.pairs)
        return None if recall is None else 2 * recall / (1 + recall)

    def to_json(self) -> dict[str, Any]:
        return {
            "in_reach": _round(_ratio(self.in_reach, self.fixes)),
            "answered_right": _round(_ratio(self.answered_right, self.fixes)),
            "precision_bar": PRECISION_BAR,
            "yield_at_bar": _round(self.yield_at(PRECISION_BAR)),
            "f1_gated": _round(self.f1_gated),
        }


def ceiling(truths: Mapping[str, Truth], labels: Iterable[Label]) -> Ceiling:
    """The bounds of ``Ceiling`` for these labels (every tier) against the in-scope truth. The
    labels must be made blind to the trailers, as ``calibrate`` makes them: otherwise a label's
    ``blamed`` holds the commits its trailer named, and every fix would count as in reach."""
    reach: set[str] = set()
    right: set[str] = set()
    labelled: set[str] = set()
    right_pairs: set[tuple[str, str]] = set()
    for lab in labels:
        truth = truths.get(lab.fix)
        if truth is None:
            continue
        if set(lab.blamed) & set(truth.named):
            reach.add(lab.fix)
        if lab.intro is None:
            continue
        labelled.add(lab.fix)
        if lab.intro in truth.named:
            right.add(lab.fix)
            right_pairs.add((lab.fix, lab.intro))
    return Ceiling(
        fixes=len(truths),
        pairs=sum(len(t.named) for t in truths.values()),
        in_reach=len(reach),
        answered_right=len(right),
        answered_wrong=len(labelled - right),
        right_pairs=len(right_pairs),
    )


@dataclass
class Calibration:
    repository: str
    head: str
    min_tier: Tier
    trailer_fixes: int
    truths: dict[str, Truth]
    labels: list[Label]
    out_of_scope: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    baseline: dict[str, set[str]] | None = None  # fix -> the commits PyDriller's SZZ names (--baseline)

    def baseline_score(self) -> Score | None:
        """PyDriller's SZZ on the same in-scope fixes, scored as one tier of labels is."""
        if self.baseline is None:
            return None
        pairs = [(fix, sha) for fix, shas in self.baseline.items() if fix in self.truths for sha in sorted(shas)]
        return Score(
            tiers=(),
            fixes=len(self.truths),
            pairs=sum(len(t.named) for t in self.truths.values()),
            labels=len(pairs),
            correct=sum(sha in self.truths[fix].named for fix, sha in pairs),
            labelled_fixes=len({fix for fix, _ in pairs}),
        )

    def tier(self, tier: Tier) -> Score:
        return score(self.truths, self.labels, (tier,))

    def upto(self, tier: Tier) -> Score:
        return score(self.truths, self.labels, tuple(t for t in TIERS if tier_allowed(t, tier)))

    @property
    def default(self) -> Score:
        return self.upto(self.min_tier)

    @property
    def code_fixes(self) -> int:
        """The in-scope fixes that change a source file: the vet stage refuses the others on their
        paths alone (``fix_only_tests``, ``fix_only_docs``, ...), as the rubric refuses a fix of tests,
        docs, CI or packaging as no bug fix, so no labeller should label them."""
        return len(self.truths) - sum(n for reason, n in self.dropped.items() if reason.startswith(NO_SOURCE))

    @property
    def default_code_yield(self) -> float | None:
        """The default output's yield over ``code_fixes`` rather than over every in-scope fix."""
        return _ratio(self.default.labelled_fixes, self.code_fixes)

    def best(self) -> Score:
        """The cumulative tier set (strongest first) with the highest F1."""
        return max((self.upto(t) for t in TIERS), key=lambda s: (s.f1 or 0.0, -len(s.tiers)))

    def ceiling(self) -> Ceiling:
        return ceiling(self.truths, self.labels)

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "head": self.head,
            "min_tier": self.min_tier,
            "in_scope": {
                "trailer_fixes": self.trailer_fixes,
                "fixes": len(self.truths),
                "pairs": sum(len(t.named) for t in self.truths.values()),
                "code_fixes": self.code_fixes,
                "out_of_scope": dict(sorted(self.out_of_scope.items())),
            },
            "default": {**self.default.to_json(), "yield_over_code_fixes": _round(self.default_code_yield)},
            "tiers": {t: self.tier(t).to_json() for t in TIERS},
            "cumulative": {t: self.upto(t).to_json() for t in TIERS},
            "best": self.best().to_json(),
            "ceiling": self.ceiling().to_json(),
            "dropped": dict(sorted(self.dropped.items())),
            "baseline": {"pydriller": base.to_json()} if (base := self.baseline_score()) else None,
        }


def trailer_fixes(repo: Repo, rev: str, config: Config, metas: dict[str, CommitMeta]) -> Iterator[CommitMeta]:
    """Walk history into ``metas``; yield the commits whose trailers name a SHA."""
    for meta in repo.commits(rev):
        metas[meta.sha] = meta
        if trailer_shas(meta.message, config.fixes):
            yield meta


def collect(
    repo: Repo, head: str, config: Config, out_of_scope: Counter[str], progress: bool = False
) -> tuple[dict[str, CommitMeta], dict[str, Truth], dict[str, list[FileDiff]]]:
    """Every commit's metadata, the in-scope truth, and the diffs of the in-scope fixes."""
    metas: dict[str, CommitMeta] = {}
    try:
        candidates = list(trailer_fixes(repo, head, config, metas))
    except MissingObjectError:
        # A snapshot without some blobs: read the history of every other path, as a build does.
        repo.exclude = tuple(repo.paths_with_missing_objects(head))
        if not repo.exclude:
            raise
        out_of_scope["paths_with_missing_objects"] += len(repo.exclude)
        metas.clear()
        candidates = list(trailer_fixes(repo, head, config, metas))
    truths: dict[str, Truth] = {}
    diffs_of: dict[str, list[FileDiff]] = {}
    shas = [m.sha for m in candidates]
    for sha, diffs in tqdm(
        repo.diffs(shas), total=len(shas), desc="calibrate: scope", unit="fix", disable=not progress, leave=False
    ):
        meta = metas[sha]
        named = [repo.expand(p) for p in trailer_shas(meta.message, config.fixes)]
        truth = scope(meta, diffs, named, metas.get, repo.is_ancestor, out_of_scope)
        if truth is None:
            out_of_scope["fix_out_of_scope"] += 1
            continue
        truths[sha] = truth
        diffs_of[sha] = diffs
    return metas, truths, diffs_of


def blind_fixes(
    truths: Mapping[str, Truth],
    metas: Mapping[str, CommitMeta],
    config: Config,
    expand: Callable[[str], str | None],
    dropped: Counter[str],
) -> list[FixCommit]:
    """The in-scope fixes as the labeller's walk would see them with trailers hidden."""
    blind = config.with_overrides(labels={"blame_only": True})
    ordered = [metas[sha] for sha in truths]
    return list(find_fixes(ordered, blind, expand, dropped))


@dataclass(frozen=True)
class Benchmark:
    """The fixes of one repository that a labeller is measured on, and what they are measured against.

    ``fixes`` are the in-scope trailer fixes as the walk sees them with the trailers hidden, and
    ``truths`` what their trailers name; a repository without such fixes gives its keyword fixes
    (with a parent) and no truths, so only time and agreement can be measured."""

    metas: dict[str, CommitMeta]
    truths: dict[str, Truth]
    fixes: list[FixCommit]


def benchmark(repo: Repo, head: str, config: Config) -> Benchmark:
    """The fixes a labeller (miner's or a baseline's) is timed and scored on, at ``head``."""
    metas, truths, _ = collect(repo, head, config, Counter())
    if truths:
        return Benchmark(metas, truths, blind_fixes(truths, metas, config, repo.expand, Counter()))
    blind = config.with_overrides(labels={"blame_only": True})
    fixes = [f for f in find_fixes(metas.values(), blind, repo.expand, Counter()) if f.meta.parents]
    return Benchmark(metas, {}, fixes)


def label_fix(repo: Repo, fix: FixCommit, lookup: Callable[[str], CommitMeta | None], config: Config) -> list[Label]:
    """One fix's labels as a build makes them (its diff read, blamed, decided), blind to nothing the
    config does not hide; no vet stage and no cache, so the time it takes is the labeller's own."""
    ((_, diffs),) = list(repo.diffs([fix.meta.sha]))
    return list(label_fixes([(fix, diffs)], repo, lookup, config, Counter()))


def _vetted(
    fixes: list[FixCommit], diffs_of: Mapping[str, list[FileDiff]], repo: Repo, config: Config, dropped: Counter[str]
) -> Iterator[tuple[FixCommit, list[FileDiff]]]:
    """The fixes whose diffs may change behaviour, as the build's labelling sees them (miner.stages.vet)."""
    for fix in fixes:
        vetted, refused = vet_fix(fix, diffs_of[fix.meta.sha], repo.blob, config)
        if vetted is None:
            dropped[refused or "vetted"] += 1
            continue
        yield vetted, diffs_of[fix.meta.sha]


@dataclass(frozen=True)
class CalibrateOptions:
    """The revision calibrated at, the fewest in-scope trailer fixes worth measuring, and a baseline
    labeller scored beside miner's (``pydriller``: PyDriller's SZZ)."""

    rev: str = "HEAD"
    min_fixes: int = MIN_IN_SCOPE
    baseline: Literal["pydriller"] | None = None


def calibrate(
    repo: Repo, name: str, config: Config, options: CalibrateOptions = CalibrateOptions(), *, progress: bool = False
) -> Calibration:
    """Run the labeller blind to trailers on the in-scope trailer fixes of ``repo`` and keep its labels;
    with ``options.baseline``, PyDriller's SZZ labels the same fixes, to be scored beside them."""
    rev, min_fixes, baseline = options.rev, options.min_fixes, options.baseline
    head = repo.resolve(rev)
    out_of_scope: Counter[str] = Counter()
    metas, truths, diffs_of = collect(repo, head, config, out_of_scope, progress)
    trailer_count = len(truths) + out_of_scope["fix_out_of_scope"]
    if len(truths) < min_fixes:
        raise TooFewTrailersError(
            f"{name} has {len(truths)} in-scope trailer fixes (of {trailer_count} with a Fixes:-style trailer); "
            f"calibration needs at least {min_fixes}: pick a repository whose fixes name the commit they repair"
        )
    dropped: Counter[str] = Counter()
    blind = config.with_overrides(labels={"blame_only": True})
    fixes = [
        f.model_copy(update={"reasons": why})
        for f, why in vet_fixes(blind_fixes(truths, metas, config, repo.expand, dropped), blind, dropped)
    ]
    pairs = _vetted(fixes, diffs_of, repo, blind, dropped)
    labels = list(
        label_fixes(
            tqdm(pairs, total=len(fixes), desc="calibrate: blame", unit="fix", disable=not progress, leave=False),
            repo,
            metas.get,
            blind,
            dropped,
        )
    )
    named = pydriller_szz(repo.git_dir, sorted(truths)) if baseline == "pydriller" else None
    return Calibration(
        repository=name,
        head=head,
        min_tier=config.labels.min_tier,
        trailer_fixes=trailer_count,
        truths=truths,
        labels=labels,
        out_of_scope=out_of_scope,
        dropped=dropped,
        baseline=named,
    )


def _fmt(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def table(cal: Calibration) -> str:
    """The calibration report for a person: per tier, cumulative, and the default output."""
    pairs = sum(len(t.named) for t in cal.truths.values())
    lines = [
        f"{cal.repository} at {cal.head[:12]}: {len(cal.truths)} in-scope trailer fixes "
        f"({pairs} pairs) of {cal.trailer_fixes} with a trailer; labeller blind to trailers",
        f"{'tiers':<34} {'pairs':>6} {'labels':>7} {'right':>6} {'precision':>10} {'recall':>7} {'yield':>6} {'F1':>6}",
    ]

    def row(title: str, s: Score) -> str:
        return (
            f"{title:<34} {s.pairs:>6} {s.labels:>7} {s.correct:>6} {_fmt(s.precision):>10} "
            f"{_fmt(s.recall):>7} {_fmt(s.yield_):>6} {_fmt(s.f1):>6}"
        )

    for t in TIERS:
        lines.append(row(f"tier {t}", cal.tier(t)))
    for t in TIERS[1:]:
        lines.append(row(f"tiers up to {t}", cal.upto(t)))
    lines.append(row(f"default (up to {cal.min_tier})", cal.default))
    lines.append(
        f"  default yield over the in-scope fixes that change a source file, not only tests, docs or config "
        f"({cal.code_fixes}): {_fmt(cal.default_code_yield)}"
    )
    best = cal.best()
    lines.append(row(f"best F1 (up to {best.tiers[-1]})", best))
    base = cal.baseline_score()
    if base is not None:
        lines.append(row("PyDriller SZZ (baseline)", base))
    c = cal.ceiling()
    lines.append(
        f"ceiling: blame reached a named commit for {c.in_reach} of {c.fixes} fixes "
        f"({_fmt(_ratio(c.in_reach, c.fixes))}); some tier's answer is right for {c.answered_right} "
        f"({_fmt(_ratio(c.answered_right, c.fixes))})"
    )
    lines.append(
        f"  a gate that knew which answers are right: yield {_fmt(c.yield_at(PRECISION_BAR))} at precision "
        f"{PRECISION_BAR:.2f}, F1 {_fmt(c.f1_gated)}"
    )
    if cal.out_of_scope:
        lines.append("out of scope: " + ", ".join(f"{k}={v}" for k, v in sorted(cal.out_of_scope.items())))
    if cal.dropped:
        lines.append("not labelled: " + ", ".join(f"{k}={v}" for k, v in sorted(cal.dropped.items())))
    return "\n".join(lines)
