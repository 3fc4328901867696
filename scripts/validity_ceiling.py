#!/usr/bin/env python3
"""How far could rules that read miner's evidence go? A model fitted to the adjudicated verdicts says.

    scripts/bench_validity.py --mirrors DIR --keep OUT          # the builds, kept
    scripts/validity_ceiling.py --mirrors DIR --keep OUT

For every adjudicated (change, fix) pair that the default output of the kept builds emits, it gathers what a
rule could read: the label's evidence (tier, reasons, the fix's reasons, age, lines blamed and agreeing, the
defect's size), the two commits' sizes and authors, and from git how many commits touched the defect's files
between the change and the fix and how recently. A logistic regression (scipy's optimiser, L2-penalised) is
fitted on the tuning and seen repositories, one repository left out at a time, and then on all of them to
score the held-out and unseen ones. It prints the area under the ROC curve and, for dropping the lowest
scored 10-50%, the validity and retention that would follow. If no threshold reaches the targets here, no
rule made of these signals can either: the model picks the best weighting of all of them at once.
"""

from __future__ import annotations

import argparse
import math
import subprocess
from pathlib import Path

import numpy as np
from adjudication import RepositoryEntry, load  # beside this file
from bench_validity import clone_of
from scipy.optimize import minimize
from scipy.stats import mannwhitneyu

from miner import Repo, open_output

ROOT = Path(__file__).resolve().parent.parent
REASONS = ("authored", "rewrote", "restores", "old_prior", "moved_lines_left_out", "prior_not_candidate")
FIX_REASONS = ("with_test", "conventional_fix", "trailer", "body_fix_statement", "subject_keyword")


def between(clone: Path, change: str, fix: str, paths: list[str]) -> tuple[int, float]:
    """Commits (no merges) that touched ``paths`` after ``change`` and before ``fix``, and the days from
    the last of them to the fix (a year when there is none)."""
    out = subprocess.run(
        ["git", "-C", str(clone), "log", "--no-merges", "--format=%ct", f"{change}..{fix}^", "--", *paths],
        capture_output=True,
        text=True,
    ).stdout.split()
    when = ["git", "-C", str(clone), "log", "-1", "--format=%ct", fix]
    fixed = int(subprocess.run(when, capture_output=True, text=True).stdout)
    return len(out), min(((fixed - int(t)) / 86400 for t in out), default=365.0)


def features(entry: RepositoryEntry, clone: Path, out: Path) -> dict[tuple[str, str], list[float]]:
    """(change, fix) -> the signals of its label, for every bug fixture of the build output ``out``."""
    repo = Repo(clone)
    rows: dict[tuple[str, str], list[float]] = {}
    for answer in open_output(out).answers():
        if answer.repository != entry.name or answer.kind != "bug":
            continue
        for fix in sorted({d.fix for d in answer.defects or ()}):
            mine = [d for d in answer.defects or () if d.fix == fix]
            e = mine[0].evidence
            change_meta, fix_meta = repo.meta(answer.head), repo.meta(fix)
            if change_meta is None or fix_meta is None:
                continue
            count, recent = between(clone, answer.head, fix, sorted({d.path for d in mine}))
            rows[(answer.head, fix)] = [
                float(e.tier == "explicit"),
                *(float(r in e.reasons) for r in REASONS),
                *(float(r in e.fix_reasons) for r in FIX_REASONS),
                math.log1p(e.age_days or 0),
                math.log1p(e.lines_blamed),
                e.lines_agreeing / max(1, e.lines_blamed),
                math.log1p(sum(d.line_end - d.line_start + 1 for d in mine)),
                math.log1p(len(mine)),
                math.log1p(fix_meta.changed_lines),
                math.log1p(len(fix_meta.files)),
                math.log1p(change_meta.changed_lines),
                float(change_meta.author_email == fix_meta.author_email),
                math.log1p(count),
                math.log1p(recent),
            ]
    return rows


def fit(x: np.ndarray, y: np.ndarray, penalty: float = 1.0) -> np.ndarray:
    """Weights (bias last) of an L2-penalised logistic regression on standardised features."""
    z = np.hstack([x, np.ones((len(x), 1))])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-z @ w))
        eps = 1e-12
        value = -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) + penalty * np.sum(w[:-1] ** 2) / 2
        grad = z.T @ (p - y) + penalty * np.append(w[:-1], 0.0)
        return float(value), grad

    return np.asarray(minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x)


def score(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.asarray(np.hstack([x, np.ones((len(x), 1))]) @ w)


def report(name: str, s: np.ndarray, y: np.ndarray) -> None:
    valid = y == 1
    auc = mannwhitneyu(s[valid], s[~valid]).statistic / (valid.sum() * (~valid).sum()) if valid.any() and (~valid).any() else 0
    print(f"{name}: {len(y)} pairs, validity {y.mean():.3f}, AUC {auc:.3f}")
    for drop in (0.1, 0.2, 0.3, 0.4, 0.5):
        kept = s >= np.quantile(s, drop)
        print(f"   drop the lowest {drop:.0%}: validity {y[kept].mean():.3f}, retention {y[kept].sum() / y.sum():.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validity", type=Path, default=ROOT / "validity")
    parser.add_argument("--mirrors", type=Path)
    parser.add_argument("--keep", type=Path, required=True, help="the --keep folder of a bench_validity.py run")
    args = parser.parse_args()
    data = load(args.validity)
    verdicts = {(v.change, fix): v.valid for v in data.bugs for fix in v.fixes}
    xs: list[list[float]] = []
    ys: list[int] = []
    repos: list[str] = []
    roles: list[str] = []
    for entry in data.repositories:
        out = args.keep / entry.name
        if not (out / "manifest.json").exists():
            continue
        for pair, row in sorted(features(entry, clone_of(entry, args.mirrors, {}), out).items()):
            if pair in verdicts:
                xs.append(row)
                ys.append(int(verdicts[pair]))
                repos.append(entry.name)
                roles.append(entry.role)
    x, y = np.array(xs), np.array(ys)
    x = (x - x.mean(axis=0)) / np.where(x.std(axis=0) > 0, x.std(axis=0), 1)
    names, role = np.array(repos), np.array(roles)
    train = np.isin(role, ("tune", "seen"))
    left_out = np.zeros(len(y))
    for name in sorted(set(names[train])):
        w = fit(x[train & (names != name)], y[train & (names != name)])
        left_out[names == name] = score(w, x[names == name])
    report("tuning and seen repositories, each left out of the fit", left_out[train], y[train])
    w = fit(x[train], y[train])
    for group in ("heldout", "unseen"):
        mask = role == group
        if mask.any():
            report(f"{group} repositories, fitted on the others", score(w, x[mask]), y[mask])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
