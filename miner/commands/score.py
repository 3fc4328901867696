"""``miner score``: how good a reviewer is on a fixture set, with honest intervals.

The rules, fixed before any result:

- **Matching.** A finding matches a defect when their paths are equal and the finding's line range is
  within ``tolerance`` lines of the defect's (0 when they overlap). Matching is one to one and maximal:
  the most pairs, then the smallest total distance (``scipy.optimize.linear_sum_assignment``), so one
  finding never takes two defects and duplicates never earn two hits.
- **Per fixture first.** Repeats of a fixture are averaged, then fixtures are averaged: recall is the
  mean over bug fixtures of caught / expected, not a pool of defects.
- **Errors apart.** A fixture whose every repeat failed is counted as an error and left out of every
  rate; a crashed run is never a clean review.
- **Intervals.** 95% bootstrap over fixtures (``scipy.stats.bootstrap``, BCa, 10,000 resamples, a
  fixed seed; the point itself when every value is equal).
- **Comparisons.** Two runs are paired on the fixtures both reviewed: a bootstrap interval on the mean
  per-fixture difference and a paired permutation test (sign flips, ``scipy.stats.permutation_test``),
  Holm's correction over the comparisons.

Findings on a bug fixture that match no defect are reported (``unlabeled``), not counted as false
alarms: a bug fixture may hold other real problems. On a clean fixture every finding of severity
warning or worse (all findings, when a reviewer gives no severity) is a false alarm.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from scipy import stats
from scipy.optimize import linear_sum_assignment

from miner.core.config import TIERS
from miner.core.errors import MinerError
from miner.core.findings import ReviewFinding, RunRecord, is_alarm, parse_output
from miner.core.output import FixtureSet
from miner.core.records import Answer

SEED = 20261201
RESAMPLES = 10_000


class Span(Protocol):
    """Where a defect is: all the matching reads of it."""

    @property
    def path(self) -> str: ...
    @property
    def line_start(self) -> int: ...
    @property
    def line_end(self) -> int: ...


@dataclass(frozen=True)
class Lines:
    """A defect as an export gives it (path and lines only)."""

    path: str
    line_start: int
    line_end: int


def distance(finding: ReviewFinding, defect: Span) -> int | None:
    """Lines between a finding's range and a defect's (0 when they overlap); None in another file."""
    if finding.path != defect.path:
        return None
    return max(0, max(finding.line_start, defect.line_start) - min(finding.end, defect.line_end))


def match(findings: Sequence[ReviewFinding], defects: Sequence[Span], tolerance: int) -> list[tuple[int, int, int]]:
    """The maximal one-to-one matching of findings to defects within ``tolerance`` lines, of the
    smallest total distance: (finding index, defect index, distance) per pair."""
    if not findings or not defects:
        return []
    never = (tolerance + 1) * (min(len(findings), len(defects)) + 1)  # costlier than any set of real pairs
    cost = np.full((len(findings), len(defects)), never, dtype=np.int64)
    for i, finding in enumerate(findings):
        for j, defect in enumerate(defects):
            d = distance(finding, defect)
            if d is not None and d <= tolerance:
                cost[i, j] = d
    rows, cols = linear_sum_assignment(cost)
    return [(int(i), int(j), int(cost[i, j])) for i, j in zip(rows, cols) if cost[i, j] < never]


def score_output(output: str, kind: str, defects: Sequence[Span], tolerance: int = 3) -> tuple[float, bool, str]:
    """One reviewer output on one fixture, scored as harnesses want it: (score, passed, why). A bug
    fixture scores the share of its defects matched; a clean one passes with no false alarm. Output
    that is not miner's findings format scores 0. Used by the Inspect scorer and the promptfoo assertion."""
    try:
        findings, _ = parse_output(output)
    except MinerError as exc:
        return 0.0, False, f"not findings: {exc}"
    if kind == "clean":
        alarms = sum(is_alarm(f) for f in findings)
        return (1.0 if alarms == 0 else 0.0), alarms == 0, f"{alarms} false alarm(s)"
    caught = len(match(list(findings), list(defects), tolerance))
    return caught / len(defects) if defects else 0.0, caught == len(defects), f"{caught} of {len(defects)} defect(s) caught"


@dataclass
class FixtureScore:
    """One reviewer on one fixture, its repeats averaged."""

    id: str
    kind: str
    recall: float | None = None  # bug: caught / expected
    detected: float | None = None  # bug: share of repeats with a catch
    unlabeled: float | None = None  # bug: findings matching no defect and near none
    duplicates: float = 0.0  # findings near a defect another finding caught
    false_alarms: float | None = None  # clean: findings of severity warning or worse
    flagged: float | None = None  # clean: share of repeats with a false alarm
    distances: list[int] = field(default_factory=list)
    cost_usd: float | None = None
    seconds: float | None = None


def score_fixture(answer: Answer, records: Sequence[RunRecord], tolerance: int) -> FixtureScore:
    """The mean over the fixture's successful repeats."""
    out = FixtureScore(id=answer.id, kind=answer.kind)
    per: dict[str, list[float]] = defaultdict(list)
    for record in records:
        findings = list(record.findings)
        if answer.kind == "bug":
            defects = list(answer.defects or ())
            pairs = match(findings, defects, tolerance)
            matched = {i for i, _, _ in pairs}
            near = [
                i
                for i, f in enumerate(findings)
                if i not in matched and any((d := distance(f, x)) is not None and d <= tolerance for x in defects)
            ]
            per["recall"].append(len(pairs) / len(defects) if defects else 0.0)
            per["detected"].append(float(bool(pairs)))
            per["unlabeled"].append(len(findings) - len(matched) - len(near))
            per["duplicates"].append(len(near))
            out.distances += [d for _, _, d in pairs]
        else:
            alarms = sum(is_alarm(f) for f in findings)
            per["false_alarms"].append(alarms)
            per["flagged"].append(float(alarms > 0))
        per["seconds"].append(record.seconds)
        if record.usage is not None and record.usage.cost_usd is not None:
            per["cost_usd"].append(record.usage.cost_usd)
    for name, values in per.items():
        setattr(out, name, float(np.mean(values)))
    return out


def interval(values: Sequence[float] | np.ndarray, seed: int = SEED, resamples: int = RESAMPLES) -> dict[str, Any] | None:
    """The mean with its 95% bootstrap interval over fixtures; None when there is nothing to average."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    mean = float(data.mean())
    if data.size == 1 or np.all(data == data[0]):
        return {"value": mean, "low": mean, "high": mean}
    result = stats.bootstrap(
        (data,), np.mean, n_resamples=resamples, confidence_level=0.95, method="BCa", random_state=np.random.default_rng(seed)
    )
    low, high = result.confidence_interval
    if not (np.isfinite(low) and np.isfinite(high)):  # BCa is undefined on some degenerate samples
        result = stats.bootstrap(
            (data,),
            np.mean,
            n_resamples=resamples,
            confidence_level=0.95,
            method="percentile",
            random_state=np.random.default_rng(seed),
        )
        low, high = result.confidence_interval
    return {"value": mean, "low": float(low), "high": float(high)}


def paired(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, seed: int = SEED, resamples: int = RESAMPLES
) -> dict[str, Any] | None:
    """Mean of a - b over paired fixtures, its bootstrap interval and a sign-flip permutation p-value."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0:
        return None
    diff = x - y
    found = interval(diff, seed, resamples)
    assert found is not None
    if np.all(diff == 0):
        found["p"] = 1.0
        return found
    if diff.size < 2:  # one pair: no test to make
        found["p"] = None
        return found
    test = stats.permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(u - v, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        random_state=np.random.default_rng(seed),
    )
    found["p"] = float(test.pvalue)
    return found


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None stays None)."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (len(known) - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass
class Reviewer:
    name: str
    scores: dict[str, FixtureScore]  # fixture id -> score, successful fixtures only
    errors: int


def load_reviewer(
    fixtures: FixtureSet, records: Iterable[RunRecord], tolerance: int, answers: dict[str, Answer], source: Path
) -> Reviewer:
    by_fixture: dict[str, list[RunRecord]] = defaultdict(list)
    names = set()
    digest = fixtures.digest()
    for record in records:
        if record.fixture_id not in answers:
            raise MinerError(
                f"{source} reviews fixture {record.fixture_id}, which is not in {fixtures.path}; "
                "score a run against the fixture set it was made on"
            )
        if record.fixture_set not in (None, digest):
            raise MinerError(
                f"{source} was made on another fixture set (its visible files differ); "
                "score it against the set it was made on, or review again"
            )
        names.add(record.reviewer)
        by_fixture[record.fixture_id].append(record)
    if len(names) > 1:
        raise MinerError(f"{source} holds runs of several reviewers ({', '.join(sorted(names))}); one file a reviewer")
    scores, errors = {}, 0
    for fid, recs in sorted(by_fixture.items()):
        good = [r for r in recs if r.status == "ok"]
        if not good:
            errors += 1
            continue
        scores[fid] = score_fixture(answers[fid], good, tolerance)
    return Reviewer(name=names.pop() if names else source.stem, scores=scores, errors=errors)


def strongest_tier(answer: Answer) -> str | None:
    """The strongest evidence tier among a bug fixture's defects (None for a clean fixture)."""
    tiers = [d.evidence.tier for d in answer.defects or ()]
    return min(tiers, key=TIERS.index) if tiers else None


def reviewable(answer: Answer) -> str | None:
    """How visible a bug fixture's defect is from the change alone, as the judge said (``--judge``): the
    most visible of its pairs' answers (``yes``, then ``hard``, then ``no``); None when nobody said."""
    said = {d.evidence.judge.reviewable for d in answer.defects or () if d.evidence.judge is not None}
    return next((level for level in ("yes", "hard", "no") if level in said), None)


def slices(answers: dict[str, Answer]) -> dict[str, set[str]]:
    """Fixture ids per slice: split, fresh or not per training cutoff, repository, evidence tier, and how
    reviewable the defect is from the change alone (where a judge said)."""
    out: dict[str, set[str]] = defaultdict(set)
    for fid, answer in answers.items():
        out[f"split:{answer.split}"].add(fid)
        out[f"repository:{answer.repository}"].add(fid)
        for cutoff, fresh in answer.fresh.items():
            out[f"{cutoff}:{'fresh' if fresh else 'not_fresh'}"].add(fid)
        tier = strongest_tier(answer)
        if tier:
            out[f"tier:{tier}"].add(fid)
        level = reviewable(answer)
        if level:
            out[f"reviewable:{level}"].add(fid)
    return dict(sorted(out.items()))


def summary(reviewer: Reviewer, answers: dict[str, Answer], resamples: int = RESAMPLES) -> dict[str, Any]:
    bugs = [s for s in reviewer.scores.values() if s.kind == "bug"]
    clean = [s for s in reviewer.scores.values() if s.kind == "clean"]
    out: dict[str, Any] = {
        "fixtures": {"bug": len(bugs), "clean": len(clean), "errors": reviewer.errors},
        "recall": interval([s.recall for s in bugs if s.recall is not None], resamples=resamples),
        "detection": interval([s.detected for s in bugs if s.detected is not None], resamples=resamples),
        "fp_per_clean": interval([s.false_alarms for s in clean if s.false_alarms is not None], resamples=resamples),
        "clean_flagged": interval([s.flagged for s in clean if s.flagged is not None], resamples=resamples),
        "line_distance": interval([d for s in bugs for d in s.distances], resamples=resamples),
        "unlabeled_per_bug": interval([s.unlabeled for s in bugs if s.unlabeled is not None], resamples=resamples),
        "duplicates": float(sum(s.duplicates for s in reviewer.scores.values())),
        "cost_usd": interval([s.cost_usd for s in reviewer.scores.values() if s.cost_usd is not None], resamples=resamples),
        "seconds": interval([s.seconds for s in reviewer.scores.values() if s.seconds is not None], resamples=resamples),
        "slices": {},
        "per_fixture": {
            s.id: {"kind": s.kind, "recall": s.recall, "false_alarms": s.false_alarms}
            for s in sorted(reviewer.scores.values(), key=lambda s: s.id)
        },
    }
    for name, ids in slices(answers).items():
        mine = [reviewer.scores[i] for i in sorted(ids) if i in reviewer.scores]
        out["slices"][name] = {
            "recall": interval([s.recall for s in mine if s.recall is not None], resamples=resamples),
            "fp_per_clean": interval([s.false_alarms for s in mine if s.false_alarms is not None], resamples=resamples),
        }
    return out


def compare(reviewers: list[Reviewer], resamples: int = RESAMPLES) -> list[dict[str, Any]]:
    """Every pair of reviewers on the fixtures both reviewed, Holm-adjusted over the pairs."""
    rows: list[dict[str, Any]] = []
    for a, b in itertools.combinations(reviewers, 2):
        both = sorted(set(a.scores) & set(b.scores))
        bug = [i for i in both if a.scores[i].kind == "bug"]
        clean = [i for i in both if a.scores[i].kind == "clean"]
        rows.append(
            {
                "a": a.name,
                "b": b.name,
                "n": len(both),
                "recall_diff": paired(
                    [a.scores[i].recall or 0.0 for i in bug], [b.scores[i].recall or 0.0 for i in bug], resamples=resamples
                ),
                "fp_diff": paired(
                    [a.scores[i].false_alarms or 0.0 for i in clean],
                    [b.scores[i].false_alarms or 0.0 for i in clean],
                    resamples=resamples,
                ),
            }
        )
    for key in ("recall_diff", "fp_diff"):
        adjusted = holm([row[key]["p"] if row[key] else None for row in rows])
        for row, p in zip(rows, adjusted):
            if row[key] is not None:
                row[key]["p_holm"] = p
    return rows


def score(
    fixtures: FixtureSet, runs: list[tuple[Path, list[RunRecord]]], tolerance: int = 3, resamples: int = RESAMPLES
) -> dict[str, Any]:
    """The whole report: per reviewer (at ``tolerance``, with recall at 0 and 10 too), and paired."""
    answers = {a.id: a for a in fixtures.answers()}
    reviewers = [load_reviewer(fixtures, records, tolerance, answers, path) for path, records in runs]
    names = [r.name for r in reviewers]
    if len(set(names)) < len(names):
        raise MinerError(f"two runs are of the same reviewer ({names}); give each run its own --name")
    report: dict[str, Any] = {
        "reviewers": {},
        "paired": compare(reviewers, resamples),
        "tolerance": tolerance,
        "seed": SEED,
        "answers_digest": fixtures.digest("answer"),
    }
    for (path, records), reviewer in zip(runs, reviewers):
        summary_ = summary(reviewer, answers, resamples)
        summary_["recall_at_tolerance"] = {}
        for other in (0, 10):
            again = load_reviewer(fixtures, records, other, answers, path)
            summary_["recall_at_tolerance"][str(other)] = interval(
                [s.recall for s in again.scores.values() if s.recall is not None], resamples=resamples
            )
        report["reviewers"][reviewer.name] = summary_
    return report


def _pct(x: dict[str, Any] | None, scale: float = 100.0, unit: str = "%") -> str:
    if x is None:
        return "-"
    digits = 0 if unit == "%" else 2
    return f"{x['value'] * scale:.{digits}f}{unit} [{x['low'] * scale:.{digits}f}-{x['high'] * scale:.{digits}f}{unit}]"


def table(report: dict[str, Any]) -> str:
    """The report for a person: each number with its 95% interval."""
    lines = [f"tolerance {report['tolerance']} lines; 95% bootstrap intervals over fixtures (seed {report['seed']})"]
    for name, r in report["reviewers"].items():
        f = r["fixtures"]
        lines += [
            f"{name}: {f['bug']} bug and {f['clean']} clean fixtures reviewed, {f['errors']} errors (left out)",
            f"  recall per bug fixture   {_pct(r['recall'])}"
            f"   (tolerance 0: {_pct(r['recall_at_tolerance']['0'])}, 10: {_pct(r['recall_at_tolerance']['10'])})",
            f"  bug fixtures caught      {_pct(r['detection'])}",
            f"  false alarms per clean   {_pct(r['fp_per_clean'], 1, '')}",
            f"  clean fixtures flagged   {_pct(r['clean_flagged'])}",
            f"  lines off when caught    {_pct(r['line_distance'], 1, '')}",
            f"  unlabeled per bug        {_pct(r['unlabeled_per_bug'], 1, '')}   duplicates {r['duplicates']:g}",
        ]
        for slice_name, s in r["slices"].items():
            if s["recall"] or s["fp_per_clean"]:
                lines.append(f"    {slice_name:<28} recall {_pct(s['recall'])}   false alarms {_pct(s['fp_per_clean'], 1, '')}")
    for row in report["paired"]:
        for key, label in (("recall_diff", "recall"), ("fp_diff", "false alarms per clean")):
            d = row[key]
            if d is not None:
                scale, unit = (100.0, " pts") if key == "recall_diff" else (1.0, "")
                test = "no test" if d["p"] is None else f"p {d['p']:.3g} (Holm {d['p_holm']:.3g})"
                lines.append(
                    f"{row['a']} - {row['b']}, {label}: {d['value'] * scale:+.2f}{unit} "
                    f"[{d['low'] * scale:+.2f}, {d['high'] * scale:+.2f}], {test}, {row['n']} paired fixtures"
                )
    return "\n".join(lines)
