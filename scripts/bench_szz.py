#!/usr/bin/env python3
"""miner's labeller against PyDriller's SZZ, side by side on the same fixes of one repository.

    scripts/bench_szz.py REPO [--limit N] [--rev REV]

The fixes are the repository's in-scope trailer fixes (``Fixes: <sha>``; see ``miner calibrate``),
so both tools can be scored against the commit the developer named; with fewer than one such
fix, miner's keyword fixes are used and only time and agreement are reported. Both tools are blind
to the trailers. miner's time per fix covers reading the fix's diff, blaming and deciding (``miner.label_fix``);
PyDriller's covers ``Git(repo).get_commits_last_modified_lines(commit)`` (diff and whole-file blame).

PyDriller writes ``blame.markUnblamableLines`` into the repository it opens, so it runs on a bare
copy in a temporary directory (``git clone --bare --no-hardlinks``); the mined repository is
never written to. Example:

    scripts/bench_szz.py ~/src/iproute2 --limit 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from miner import (
    CommitMeta,
    FixCommit,
    MinerError,
    Repo,
    Truth,
    benchmark,
    label_fix,
    load_config,
    pydriller_szz,
    repository_name,
    tier_allowed,
)


@dataclass
class Run:
    name: str
    seconds: list[float] = field(default_factory=list)
    answers: dict[str, set[str]] = field(default_factory=dict)  # fix -> commits it was blamed on

    def quantile(self, q: float) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _evenly(items: list[FixCommit], limit: int | None) -> list[FixCommit]:
    if limit is None or len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def miner_run(
    repo: Repo, fixes: list[FixCommit], metas: dict[str, CommitMeta], min_tier: str, all_tiers: bool
) -> tuple[Run, Run]:
    """miner's default output and all its tiers: one timed labelling pass serves both."""
    config = load_config().with_overrides(labels={"blame_only": True})
    default, every = Run("miner (default tiers)"), Run("miner (all tiers)")
    for fix in fixes:
        start = time.perf_counter()
        labels = label_fix(repo, fix, metas.get, config)
        elapsed = time.perf_counter() - start
        for run in (default, every):
            run.seconds.append(elapsed)
            keep = {lab.intro for lab in labels if lab.intro and lab.tier and (run is every or tier_allowed(lab.tier, min_tier))}  # type: ignore[arg-type]
            run.answers[fix.meta.sha] = keep
    return default, every


def pydriller_run(path: Path, fixes: list[FixCommit]) -> Run:
    run = Run("PyDriller get_commits_last_modified_lines")
    run.answers.update(pydriller_szz(path, [fix.meta.sha for fix in fixes], lambda fix, seconds: run.seconds.append(seconds)))
    return run


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def report(runs: list[Run], truths: dict[str, Truth], fixes: list[FixCommit]) -> str:
    scored = bool(truths)
    head = f"{'method':<44} {'fixes':>5} {'answered':>8} {'median ms':>9} {'p90 ms':>7} {'total s':>8}" + (
        f" {'precision':>9} {'recall':>6} {'yield':>6} {'F1':>6} {'prec(1 cand)':>12} {'yield(1)':>8}" if scored else ""
    )
    lines = [head]
    for run in runs:
        answered = sum(1 for f in fixes if run.answers.get(f.meta.sha))
        row = (
            f"{run.name:<44} {len(fixes):>5} {answered:>8} {1000 * statistics.median(run.seconds):>9.1f} "
            f"{1000 * run.quantile(0.9):>7.1f} {sum(run.seconds):>8.2f}"
        )
        if scored:
            made = right = single = single_right = 0
            pairs = sum(len(t.named) for t in truths.values())
            for f in fixes:
                got = run.answers.get(f.meta.sha, set())
                named = set(truths[f.meta.sha].named)
                made += len(got)
                right += len(got & named)
                if len(got) == 1:
                    single += 1
                    single_right += len(got & named)
            p = right / made if made else None
            r = right / pairs if pairs else None
            f1 = 2 * p * r / (p + r) if p and r else None
            row += (
                f" {_fmt(p):>9} {_fmt(r):>6} {_fmt(answered / len(fixes)):>6} {_fmt(f1):>6} "
                f"{_fmt(single_right / single if single else None):>12} {_fmt(single / len(fixes)):>8}"
            )
        lines.append(row)
    return "\n".join(lines)


def agreement(a: Run, b: Run, fixes: list[FixCommit]) -> str:
    both = same = inside = 0
    for f in fixes:
        x, y = a.answers.get(f.meta.sha, set()), b.answers.get(f.meta.sha, set())
        if x and y:
            both += 1
            same += x == y
            inside += x <= y
    return (
        f"agreement {a.name} vs {b.name}: both answered {both} fixes; identical answer {same}"
        f" ({same / both:.0%}); miner's answer among PyDriller's {inside} ({inside / both:.0%})"
        if both
        else "agreement: no fix answered by both"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="at most N fixes, spread evenly over history")
    parser.add_argument("--rev", default="HEAD")
    args = parser.parse_args()
    try:
        repo = Repo(args.repo)
        config = load_config()
        head = repo.resolve(args.rev)
        bench = benchmark(repo, head, config)
        metas = bench.metas
        fixes = _evenly(bench.fixes, args.limit)
        truths = {f.meta.sha: bench.truths[f.meta.sha] for f in fixes if f.meta.sha in bench.truths}
        print(
            f"{repository_name(args.repo)}: {len(fixes)} fixes"
            f" ({'in-scope trailer fixes, trailers hidden' if truths else 'keyword fixes, no trailers to score'})",
            file=sys.stderr,
        )
        default, every = miner_run(repo, fixes, metas, config.labels.min_tier, True)
        pyd = pydriller_run(args.repo, fixes)
    except MinerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report([default, every, pyd], truths, fixes))
    print(agreement(every, pyd, fixes))
    ratio = statistics.median(pyd.seconds) / statistics.median(default.seconds)
    total = sum(pyd.seconds) / sum(default.seconds)
    print(f"speed: miner is {ratio:.1f}x faster per fix (median), {total:.1f}x in total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
