#!/usr/bin/env python3
"""How many of miner's fixtures are true, on repositories whose fixtures were read one by one.

    scripts/bench_validity.py --mirrors DIR [--role tune|seen|heldout|unseen|fresh|late|all] [--only NAME ...] [--pydriller]
                              [--judge CMD] [--config FILE] [--clean-ratio R] [--keep DIR] [--json]

For every repository in ``validity/repositories.yaml`` (its clone found under ``--mirrors`` as
``owner+name/repo``, ``owner+name`` or ``name``, or given as ``--repo NAME=PATH``), miner builds
at the adjudicated head with the shipped defaults, except that every eligible clean candidate is
taken (a large ``clean.ratio``), so a seeded draw does not blur the clean figures. The fixtures are
matched to the verdicts in ``validity/`` by commit ids (``scripts/adjudication.py``), and the bench prints,
per repository and for each role (tuning, seen, held-out, unseen, fresh, late) apart:

- bug fixtures emitted, adjudicated, validity (with a 95% Wilson interval), and the validity of the
  baseline draw the verdicts were sampled from (miner 0.2.0's default output; for the held-out
  repositories the first draw read, ``r4-sample`` of 0.4.0); retention: the share of the valid fixtures
  of that baseline sample the build still emits;
- the same for clean fixtures: validity of the clean fixtures that have a verdict, and retention: the
  share of the valid clean candidates that are still eligible.

With ``--pydriller``, PyDriller's ``get_commits_last_modified_lines`` labels the same fixes (every fix
that has a verdict), on a bare copy of the repository (PyDriller writes into the repository it opens);
each (commit, fix) pair it names that has a verdict is scored the same way. With ``--judge CMD`` every
build asks that judge (``miner build --judge``): a judge whose answers were written out of band by
readers of the packets is ``scripts/queue_judge.py``. Examples:

    scripts/bench_validity.py --mirrors /work/.mirror --role heldout --pydriller
    scripts/bench_validity.py --mirrors /work/.mirror --role heldout --judge "python scripts/queue_judge.py answers/"
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from adjudication import (  # beside this file
    ROLES,
    Adjudicated,
    BugVerdict,
    Rate,
    RepositoryEntry,
    Score,
    emitted,
    load,
    sample,
    score,
    total,
)

from miner import BuildOptions, JudgeCommand, Keep, MinerError, Workers, build, load_config, open_output, pydriller_szz

ROOT = Path(__file__).resolve().parent.parent
TIER_FIELDS = ("drawn", "adjudicated", "valid")


def clone_of(entry: RepositoryEntry, mirrors: Path | None, given: dict[str, Path]) -> Path:
    if entry.name in given:
        return given[entry.name]
    owner_name = entry.url.rstrip("/").split("github.com/")[-1].replace("/", "+")
    for candidate in [mirrors / owner_name / "repo", mirrors / owner_name, mirrors / entry.name] if mirrors else []:
        if candidate.exists():
            return candidate
    raise MinerError(f"no clone of {entry.url} found; give --mirrors DIR or --repo {entry.name}=PATH")


def build_one(
    entry: RepositoryEntry,
    path: Path,
    out: Path,
    jobs: int,
    fresh: bool,
    judge: str | None = None,
    config_file: Path | None = None,
    clean_ratio: float = 1000.0,
) -> float:
    config = load_config(config_file).with_overrides(clean={"ratio": clean_ratio, "max_count": 1_000_000})
    start = time.perf_counter()
    build(
        [path],
        out,
        config,
        BuildOptions(
            rev=entry.head,
            names=[entry.name],
            workers=Workers(jobs=jobs),
            use_cache=not fresh,
            # Candidates the judge has no answer for (a recorded judge answers only what was read) are kept,
            # marked, so the figure is the judge's effect on what it read.
            judge=JudgeCommand(judge, keep=Keep(unjudged=True)) if judge else None,
        ),
        force=out.exists(),
        progress=False,
    )
    return time.perf_counter() - start


def pydriller_score(entry: RepositoryEntry, path: Path, bugs: list[BugVerdict]) -> tuple[Rate, int]:
    """Validity of PyDriller's (commit, fix) pairs that have a verdict; and how many pairs it named."""
    mine = [v for v in bugs if v.repository == entry.url]
    verdict = {(v.change, fix): v for v in mine for fix in v.fixes}
    named = pydriller_szz(path, sorted({fix for v in mine for fix in v.fixes}))
    judged = [verdict[(c, fix)] for fix, commits in named.items() for c in commits if (c, fix) in verdict]
    return Rate(sum(v.valid for v in judged), len(judged)), sum(len(c) for c in named.values())


def unjudged(where: Path, entry: RepositoryEntry, out: Path, data: Adjudicated, size: int | None) -> None:
    """Append the sampled fixtures that have no verdict (one JSON line each: repository, fixture, change,
    fixes, kind), to be adjudicated."""
    found = emitted(out, entry.name)
    judged = {(v.change, fix) for v in data.bugs if v.repository == entry.url for fix in v.fixes}
    judged_clean = {v.change for v in data.clean if v.repository == entry.url}
    ids = {answer.head: answer.id for answer in open_output(out).answers()}
    with open(where, "a", encoding="utf-8") as handle:
        for change in sample(found.bugs, size, f"validity:{entry.name}"):
            fixes = sorted(found.bugs[change])
            if not all((change, fix) in judged for fix in fixes):
                handle.write(
                    json.dumps(
                        {
                            "repository": entry.name,
                            "fixture": ids[change],
                            "change": change,
                            "fixes": fixes,
                            "kind": "bug",
                            "out": str(out),
                        }
                    )
                    + "\n"
                )
        for change in sample(found.clean, size, f"validity:{entry.name}:clean"):
            if change not in judged_clean:
                handle.write(
                    json.dumps(
                        {"repository": entry.name, "fixture": ids[change], "change": change, "kind": "clean", "out": str(out)}
                    )
                    + "\n"
                )


def tiers_row(s: Score) -> str | None:
    """The drawn clean fixtures by how near a fix followed them, when the sample took any past the fix
    window (valid/adjudicated of drawn)."""
    if set(s.clean_tiers) <= {"none"}:
        return None
    parts = [f"{tier} {v}/{a} of {n}" for tier, (n, a, v) in sorted(s.clean_tiers.items())]
    return f"    {s.repository} clean by fix_nearby (valid/adjudicated of drawn): " + ", ".join(parts)


def row(s: Score, pyd: tuple[Rate, int] | None) -> str:
    text = (
        f"{s.repository:<11} {s.role:<8} {s.bug_total:>5} {s.bug_adjudicated:>5}  {s.validity.text():<22} "
        f"{s.baseline.text():<22} {s.retention.text():<22} | {s.clean_emitted:>5} {s.clean_adjudicated:>4}  "
        f"{s.clean_validity.text():<22} {s.clean_baseline.text():<22} {s.clean_retention.text():<22}"
    )
    if pyd is not None:
        text += f" | {pyd[0].text():<22} {pyd[1]:>5}"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validity", type=Path, default=ROOT / "validity")
    parser.add_argument("--mirrors", type=Path)
    parser.add_argument("--repo", action="append", default=[], help="NAME=PATH of one repository's clone")
    parser.add_argument("--role", choices=[*ROLES, "all"], default="all")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--keep", type=Path, help="keep the build outputs here (a rerun rebuilds from their cache)")
    parser.add_argument("--fresh", action="store_true", help="mine again instead of reusing kept outputs' caches")
    parser.add_argument("--pydriller", action="store_true")
    parser.add_argument("--judge", metavar="CMD", help="build with this judge (miner build --judge CMD)")
    parser.add_argument("--config", type=Path, help="a config overlaid on the defaults, as miner build --config")
    parser.add_argument(
        "--clean-ratio",
        type=float,
        default=1000.0,
        help="clean.ratio of the builds (default 1000: every clean candidate that passes is taken; a build's "
        "own ratio measures what it emits, but not retention)",
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-invalid", action="store_true", help="list the adjudicated invalid fixtures emitted")
    parser.add_argument(
        "--sample",
        type=int,
        help="measure validity on a seeded uniform sample of this many bug "
        "(and clean) fixtures per repository, not on every emitted one that has a verdict",
    )
    parser.add_argument("--list-unjudged", type=Path, help="write the sampled fixtures that have no verdict here")
    args = parser.parse_args()
    given = {k: Path(v) for k, _, v in (r.partition("=") for r in args.repo)}
    data: Adjudicated = load(args.validity)
    entries = [
        e for e in data.repositories if (args.role == "all" or e.role == args.role) and (not args.only or e.name in args.only)
    ]
    keep = args.keep or Path(tempfile.mkdtemp(prefix="bench-validity-"))
    keep.mkdir(parents=True, exist_ok=True)
    scores: list[Score] = []
    pyd: dict[str, tuple[Rate, int]] = {}
    print(
        f"{'repository':<11} {'role':<8} {'bugs':>5} {'judg':>5}  {'validity':<22} {'baseline draw':<22} "
        f"{'retention':<22} | {'clean':>5} {'judg':>4}  {'clean validity':<22} {'clean pool':<22} "
        f"{'clean retention':<22}" + (f" | {'PyDriller validity':<22} {'pairs':>5}" if args.pydriller else ""),
        file=sys.stderr,
    )
    for entry in entries:
        path = clone_of(entry, args.mirrors, given)
        out = keep / entry.name
        seconds = build_one(entry, path, out, args.jobs, args.fresh, args.judge, args.config, args.clean_ratio)
        s = score(entry, emitted(out, entry.name), data.bugs, data.clean, args.sample)
        if args.list_unjudged:
            unjudged(args.list_unjudged, entry, out, data, args.sample)
        scores.append(s)
        if args.pydriller:
            pyd[entry.name] = pydriller_score(entry, path, list(data.bugs))
        print(row(s, pyd.get(entry.name)) + f"   ({seconds:.0f} s)", file=sys.stderr)
        if tiers_row(s):
            print(tiers_row(s), file=sys.stderr)
        if args.show_invalid:
            for line in s.invalid:
                print(f"    invalid: {line}", file=sys.stderr)
    groups = {role: [s for s in scores if s.role == role] for role in ROLES}
    for role, members in [*groups.items(), ("all", scores)]:
        if members:
            t = total(members)
            t.repository, t.role = role, ""
            py = None
            if args.pydriller:
                k = sum(pyd[s.repository][0].k for s in members)
                n = sum(pyd[s.repository][0].n for s in members)
                py = (Rate(k, n), sum(pyd[s.repository][1] for s in members))
            print(row(t, py), file=sys.stderr)
            if tiers_row(t):
                print(tiers_row(t), file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "repository": s.repository,
                        "role": s.role,
                        "bug_emitted": s.bug_emitted,
                        "validity": s.validity.to_json(),
                        "baseline": s.baseline.to_json(),
                        "retention": s.retention.to_json(),
                        "clean_emitted": s.clean_emitted,
                        "clean_validity": s.clean_validity.to_json(),
                        "clean_baseline": s.clean_baseline.to_json(),
                        "clean_retention": s.clean_retention.to_json(),
                        "clean_by_fix_nearby": {t: dict(zip(TIER_FIELDS, c)) for t, c in s.clean_tiers.items()},
                        **({"pydriller": pyd[s.repository][0].to_json()} if s.repository in pyd else {}),
                    }
                    for s in scores
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MinerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
