"""Interrupt `miner build` at many moments and check that every rerun writes the same bytes.

    python scripts/fault_injection.py [--repo PATH] [--points N] [--seed S] [--how kill,int,...] [-j N]
    python scripts/fault_injection.py --repo PATH --fractions 0.25,0.5,0.75 --how kill,int
    python scripts/fault_injection.py --repo PATH --partial

Without --repo it builds the `shelf` sample repository from its spec. It first times an
uninterrupted build (the reference bytes), then for each point starts the same build, interrupts it
(see tests/faultkit.py: kill -9 of the process group, Ctrl-C to the group, SIGTERM, SIGKILL to a git
child or to a worker) after a seeded delay, or at the given fractions of the reference time, runs the
command again and compares every file of the output, its cache included, with the reference. It
prints each point and how many it tried, how many signals landed before the build ended, and every
problem; it exits 1 if there was one.

With --partial it also clones the repository without blobs (`git clone --filter=blob:none`, served
from the local path with filtering allowed) and checks that the partial clone gives the same bug
fixtures as the full one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from faultkit import HOWS, command, interrupt, output_bytes, points, trouble  # noqa: E402
from samples import build_repo  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="repository to build (default: the shelf sample)")
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--how", default=",".join(HOWS), help=f"interruptions, of {', '.join(HOWS)}")
    parser.add_argument("--fractions", help="interrupt at these fractions of the reference time, not at random")
    parser.add_argument("--partial", action="store_true", help="also compare a blob-less partial clone")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="miner-faults-"))
    try:
        repo = args.repo.resolve() if args.repo else _sample(work)
        extra = ("-j", str(args.jobs))
        started = time.monotonic()
        subprocess.run(command(repo, work / "reference" / "out", *extra), check=True, capture_output=True)
        length = time.monotonic() - started
        reference = output_bytes(work / "reference" / "out")
        print(f"reference build of {repo}: {length:.1f} s, {len(reference)} files")
        hows = args.how.split(",")
        if args.fractions:
            tried = [(how, round(float(f) * length, 3)) for how in hows for f in args.fractions.split(",")]
        else:
            tried = [(hows[n % len(hows)], delay) for n, (_, delay) in enumerate(points(args.seed, args.points, length))]
        problems, landed = [], 0
        for n, (how, delay) in enumerate(tried):
            trial = interrupt(repo, work / str(n) / "out", how, delay, reference, extra)
            landed += trial.hit
            problem = trouble(trial)
            print(
                f"{how:>6} at {delay:6.2f} s: {'landed' if trial.hit else 'after the end'}, first exit "
                f"{trial.first_code}, rerun exit {trial.rerun_code}, {'same bytes' if trial.same else 'DIFFERENT'}"
                + (f"  PROBLEM: {problem.splitlines()[0]}" if problem else ""),
                flush=True,
            )
            if problem:
                problems.append((how, delay, problem))
            shutil.rmtree(work / str(n), ignore_errors=True)
        print(f"tried {len(tried)} points, {landed} landed before the build ended, {len(problems)} problems")
        if args.partial:
            problems += _partial(repo, work, reference, extra)
        for how, delay, problem in problems:
            print(f"\n{how} at {delay} s:\n{problem}")
        return 1 if problems else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _sample(work: Path) -> Path:
    build_repo(ROOT / "sample_repos" / "shelf", work / "shelf")
    return work / "shelf"


def _partial(repo: Path, work: Path, reference: dict[str, bytes], extra: tuple[str, ...]) -> list[tuple[str, float, str]]:
    part = work / "partial" / repo.name
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--bare",
            "--filter=blob:none",
            "--upload-pack=git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack",
            f"file://{repo}",
            str(part),
        ],
        check=True,
    )
    started = time.monotonic()
    out = work / "partial" / "out"
    built = subprocess.run(command(part, out, *extra), capture_output=True, text=True)
    took = time.monotonic() - started
    if built.returncode != 0:
        return [("partial", 0.0, built.stderr)]
    full = _bugs(reference)
    mine = _bugs(output_bytes(out))
    print(
        f"partial clone: built in {took:.1f} s; {len(mine)} bug fixtures, {len(full)} from the full clone, "
        f"{'the same' if mine == full else 'DIFFERENT'}"
    )
    return [] if mine == full else [("partial", 0.0, f"bug fixtures differ: {sorted(mine ^ full)[:5]}")]


def _bugs(files: dict[str, bytes]) -> set[str]:
    """The bug fixtures of an output, as their change commits and defect lines."""
    found = set()
    for name, data in files.items():
        if name.startswith("answers/"):
            answer = json.loads(data)
            if answer["kind"] == "bug":
                found.add(json.dumps([answer["head"], answer["defects"]], sort_keys=True))
    return found


if __name__ == "__main__":
    sys.exit(main())
