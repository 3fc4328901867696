"""How often is a clean fixture a commit that some later fix names as the one it repairs?

Builds each repository with `--blame-only` (trailers and reverts hidden from the labeller, so
they cannot have kept a commit out of the clean sample), then reads every `Fixes: <sha>` /
`Regression from <sha>` trailer and revert in the history, and counts the clean fixtures
whose commit one of them names. Those are clean fixtures that are really bug-introducing.

Example:
    python scripts/clean_vs_trailers.py /path/to/repo [/path/to/other ...] --jobs 2
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from miner import BuildOptions, Repo, Workers, build, load_config, open_output, trailer_shas


def measure(path: Path, jobs: int, ratio: float) -> dict[str, Any]:
    config = load_config().with_overrides(labels={"blame_only": True}, clean={"ratio": ratio})
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        build([path], out, config, BuildOptions(workers=Workers(jobs=jobs)), progress=False)
        clean = [answer.head for answer in open_output(out).answers() if answer.kind == "clean"]
    repo = Repo(path)
    fixes = load_config().fixes
    named: set[str] = set()
    for meta in repo.commits("HEAD"):
        prefixes = list(trailer_shas(meta.message, fixes)) + re.findall(fixes.revert_pattern, meta.message)
        for prefix in prefixes:
            full = repo.expand(prefix.lower())
            if full:
                named.add(full)
    hits = [sha for sha in clean if sha in named]
    return {
        "repository": str(path),
        "clean": len(clean),
        "named_by_a_trailer": len(hits),
        "share": round(len(hits) / len(clean), 4) if clean else None,
        "trailer_targets": len(named),
        "examples": hits[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--ratio",
        type=float,
        default=1.0,
        help="clean fixtures per bug fixture (default 1.0: a larger sample than the default 1/3)",
    )
    args = parser.parse_args()
    print(f"{'repository':<45} {'clean':>6} {'named':>6} {'share':>7}")
    for path in args.repos:
        row = measure(path, args.jobs, args.ratio)
        print(
            f"{str(row['repository'])[-45:]:<45} {row['clean']:>6} {row['named_by_a_trailer']:>6} "
            f"{(row['share'] or 0) * 100:>6.2f}%"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
