"""Benchmark `miner export --format bundle`: the old way (a whole-history bundle per fixture) against
this checkout's (each repository's history once, cut at the fixtures' bases, and a thin bundle per
fixture), side by side on the same build, and the size of one bundle of each repository's whole
history (up to the mined head) to hold them against.

The old way runs from another checkout of miner (a `git worktree` of main's commit) put first on
PYTHONPATH; this checkout runs the new way. Each export runs in its own process, one after the
other. Then, on the new export, the consumer: `materialize.sh` for the fixture with the longest
history against `miner materialize` of the same fixture. Prints a table, or JSON with --json.

Example:
    git worktree add /tmp/miner-main main
    python scripts/bench_bundle.py builds/drgn --repo /path/to/drgn --old /tmp/miner-main
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def timed(args: list[str], pythonpath: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    start = time.perf_counter()
    # From the root directory: `python -m` puts the working directory first on sys.path, and a
    # checkout there would shadow PYTHONPATH's.
    proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd="/")
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    return elapsed


def bundle_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.bundle"))


def whole_history_bytes(build: Path, repos: list[Path], tmp: Path) -> int:
    """The bytes of one bundle per repository of its whole history, up to the head it was mined at,
    made with plain git in a repository of its own (the mined one is only read)."""
    from miner import open_output

    total = 0
    for entry in open_output(build).manifest.repositories:
        source = next(r for r in repos if subprocess.run(["git", "-C", str(r), "cat-file", "-e", entry.head]).returncode == 0)
        copy = tmp / f"whole-{entry.name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(copy)], check=True)
        pack = subprocess.run(
            ["git", "-C", str(source), "pack-objects", "--revs", "--stdout", "-q"],
            input=f"{entry.head}\n".encode(),
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["git", "-C", str(copy), "index-pack", "--stdin"], input=pack, capture_output=True, check=True)
        subprocess.run(["git", "-C", str(copy), "update-ref", "refs/heads/main", entry.head], check=True)
        bundle = tmp / f"whole-{entry.name}.bundle"
        subprocess.run(["git", "-C", str(copy), "bundle", "create", "-q", str(bundle), "main"], check=True)
        total += bundle.stat().st_size
    return total


def consumer(build: Path, repo: Path, export: Path, tmp: Path) -> dict[str, str | int | float]:
    """materialize.sh for the fixture that needs the most history bundles (alone; through a cache
    it fills; through that cache once full) against `miner materialize` of the same fixture."""

    def needed(path: Path) -> int:
        return sum(int(b) - int(a) + 1 for _, a, b in (line.split() for line in path.read_text().splitlines()))

    longest = max(sorted((export / "bundles").glob("*.needs")), key=needed)
    fixture = longest.name.removesuffix(".needs")
    seconds = {}
    for run, extra in (("script_s", []), ("script_cold_cache_s", [tmp / "cache"]), ("script_warm_cache_s", [tmp / "cache"])):
        start = time.perf_counter()
        script = ["sh", str(export / "materialize.sh"), fixture, str(tmp / run), *map(str, extra)]
        subprocess.run(script, check=True, capture_output=True)
        seconds[run] = round(time.perf_counter() - start, 2)
    made = timed(
        [sys.executable, "-m", "miner", "materialize", str(build), fixture, "--to", str(tmp / "from-repo"), "--repo", str(repo)],
        HERE,
    )
    return {"fixture": fixture, "bundles_applied": needed(longest) + 1, **seconds, "materialize_s": round(made, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path, help="a build output of `miner build`")
    parser.add_argument("--repo", type=Path, action="append", required=True, help="a repository mined into it (repeatable)")
    parser.add_argument("--old", type=Path, required=True, help="a checkout of miner that exports the old way (main's commit)")
    parser.add_argument("--work", type=Path, help="where the exports go (default: a temporary directory, removed)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.build, args.old = args.build.resolve(), args.old.resolve()
    args.repo = [r.resolve() for r in args.repo]
    for code in (args.old, HERE):
        imported = subprocess.run(
            [sys.executable, "-c", "import miner; print(miner.__file__)"],
            env={**os.environ, "PYTHONPATH": str(code)},
            cwd="/",
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not imported.startswith(str(code)):
            sys.exit(f"{code} is not the miner that runs with it on PYTHONPATH ({imported} is)")
    sys.path.insert(0, str(HERE))
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        repos = [a for r in args.repo for a in ("--repo", str(r))]
        export = [sys.executable, "-m", "miner", "export", str(args.build), "--format", "bundle", *repos, "--to"]
        whole = whole_history_bytes(args.build, args.repo, work)
        rows: dict[str, dict[str, float]] = {}
        for way, code in (("old", args.old), ("new", HERE)):
            seconds = timed([*export, str(work / way)], code)
            rows[way] = {"seconds": round(seconds, 1), "bytes": bundle_bytes(work / way)}
        squash = timed([*export, str(work / "squash"), "--squash"], HERE)
        rows["new --squash"] = {"seconds": round(squash, 1), "bytes": bundle_bytes(work / "squash")}
        size_ratio = round(rows["new"]["bytes"] / whole, 3)
        time_ratio = round(rows["new"]["seconds"] / rows["old"]["seconds"], 3)
        c = consumer(args.build, args.repo[0], work / "new", work)
    if args.json:
        result = {
            "whole_history_bytes": whole,
            "exports": rows,
            "size_ratio_new_to_whole": size_ratio,
            "time_ratio_new_to_old": time_ratio,
            "consumer": c,
        }
        print(json.dumps(result, indent=2))
        return
    print(f"one bundle of the whole history: {whole / 1e6:.1f} MB")
    print(f"{'export':<14}{'seconds':>9}{'MB':>10}{'x whole':>9}")
    for way, row in rows.items():
        print(f"{way:<14}{row['seconds']:>9}{row['bytes'] / 1e6:>10.1f}{row['bytes'] / whole:>9.2f}")
    print(f"new / old time: {time_ratio} (done when <= 0.25)")
    print(f"new / whole size: {size_ratio} (done when <= 2)")
    print(
        f"consumer, {c['fixture']} ({c['bundles_applied']} bundles): materialize.sh {c['script_s']} s, "
        f"through a cache {c['script_cold_cache_s']} s (cold) {c['script_warm_cache_s']} s (warm); "
        f"miner materialize {c['materialize_s']} s"
    )


if __name__ == "__main__":
    main()
