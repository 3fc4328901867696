#!/usr/bin/env python3
"""The judged road against an endpoint that fails as hosted ones do, beside the same endpoint without faults.

    python scripts/judge_faults.py [--repo PATH] [--latency S] [--stall S] [-j N] [--judge-jobs N]

Starts a stand-in OpenAI-compatible endpoint on loopback (tests/fake_endpoint.py: its "model" answers each
packet by rules of the packet's text, the same answer every time, after ``--latency`` seconds), and runs
``miner build REPO --judge "miner judge --url URL --model M" --json`` twice, each into a new output:

1. against the endpoint without faults;
2. against it with the faults of the issue: 429 with ``Retry-After: 1`` on 30% of first tries, 500 on 10%, a
   reply that is not JSON on 5% (half a body that is no JSON at all, half a model reply with no answer in
   it), a stall of ``--stall`` seconds (20) on 5%.

It prints, for each, the build's wall time and judge figures, and checks what the issue asks: nothing failed,
the same fixtures (ids) as without faults, and the report's tokens equal to what the endpoint billed. Then
once more without faults with ``--judge-jobs 1``, to show what asking side by side is worth. Without
``--repo`` it builds the ``pyledger`` sample repository from its spec. Exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_endpoint import Endpoint, Faults, answer_for, serve  # noqa: E402  (a development tool beside the tests)
from samples import build_repo, spec_dirs  # noqa: E402


def build(repo: Path, out: Path, endpoint: Endpoint, jobs: int, judge_jobs: int) -> tuple[float, dict[str, object]]:
    """Run the build; its wall time and its JSON report."""
    command = f"miner judge --url {endpoint.url} --model stand-in"
    args = [sys.executable, "-m", "miner", "build", str(repo), "--out", str(out), "-q", "--json", "-j", str(jobs)]
    args += ["--judge", command, "--judge-jobs", str(judge_jobs)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"miner build failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return took, json.loads(done.stdout)


def fixture_ids(out: Path) -> set[str]:
    return {e["id"] for e in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["fixtures"]}


def totals(report: dict[str, object]) -> dict[str, int]:
    found: dict[str, int] = {}
    for repo in report["repositories"]:  # type: ignore[attr-defined]
        for key, value in repo["judge"].items():
            found[key] = found.get(key, 0) + value
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="the repository to mine (default: the pyledger sample)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the stand-in model takes to answer")
    parser.add_argument("--stall", type=float, default=20.0, help="seconds a stalled request waits")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--judge-jobs", type=int, default=8)
    args = parser.parse_args()

    def slow(packet: dict[str, object]) -> dict[str, str]:
        time.sleep(args.latency)
        return answer_for(packet)

    faults = Faults(rate_limit=0.3, server_error=0.1, garbled=0.025, prose=0.025, stall=0.05, stall_seconds=args.stall)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="judge-faults-") as tmp:
        scratch = Path(tmp)
        repo = args.repo
        if repo is None:
            spec = next(s for s in spec_dirs(ROOT / "sample_repos") if s.name == "pyledger")
            repo = scratch / "pyledger"
            build_repo(spec, repo)
        rows = []
        runs = [
            ("no faults", Faults(), args.judge_jobs),
            ("faults", faults, args.judge_jobs),
            ("no faults, one at a time", Faults(), 1),
        ]
        for n, (name, chosen, judge_jobs) in enumerate(runs):
            with serve(chosen, respond=slow) as endpoint:
                out = scratch / f"out{n}"
                took, report = build(repo, out, endpoint, args.jobs, judge_jobs)
                while endpoint.inflight:  # a reply the client stopped waiting for is billed all the same
                    time.sleep(0.1)
                rows.append(
                    (name, judge_jobs, took, totals(report), endpoint.billed_input, endpoint.billed_output, dict(endpoint.met))
                )
                if n == 0:
                    expected = fixture_ids(out)
                elif fixture_ids(out) != expected:
                    problems.append(f"{name}: {len(fixture_ids(out) ^ expected)} fixtures differ from the build without faults")
        print(f"repository: {repo}; the stand-in model answers in {args.latency:g} s; -j {args.jobs}")
        heads = ["judge-jobs", "wall", "asked", "failed", "retries", "tokens in", "billed in", "tokens out", "billed out"]
        print(f"{'run':<26} " + " ".join(f"{h:>10}" for h in heads) + "  faults met")
        for name, judge_jobs, took, t, billed_in, billed_out, met in rows:
            print(
                f"{name:<26} {judge_jobs:>10} {took:>9.1f}s {t['asked']:>10} {t['failed']:>10} {t['retries']:>10} "
                f"{t['input_tokens']:>10,} {billed_in:>10,} {t['output_tokens']:>10,} {billed_out:>10,}  {met}"
            )
            if t["failed"] or t["unasked"]:
                problems.append(f"{name}: {t['failed']} failed, {t['unasked']} unasked")
            if (t["input_tokens"], t["output_tokens"]) != (billed_in, billed_out):
                problems.append(f"{name}: the report's tokens are not the endpoint's bill")
        print(f"asking side by side: {rows[2][2] / rows[0][2]:.1f}x faster than one at a time")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    print("all checks passed" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
