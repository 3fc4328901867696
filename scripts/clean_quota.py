#!/usr/bin/env python3
"""How many clean fixtures each repository gets, of the ``clean.ratio`` wanted: a default build beside a
judged one.

    python scripts/clean_quota.py NAME=PATH ... [--out DIR] [-j N]

For each repository, ``miner build`` runs twice, each into its own output under ``--out`` (a temporary folder
by default; a second run reuses the outputs' caches): with the defaults, then with ``--judge "miner judge --url
URL --model M"`` against the stand-in OpenAI-compatible endpoint of the tests (tests/fake_endpoint.py, on
loopback; its "model" refuses a clean candidate whose packet shows a later rewrite of its lines, and a
change that says "tweak"). Any judge does for the count: a judged build goes past the fix window
(``clean.judged_fix_window_fallback``) when too few candidates pass it. It prints per repository the bug
and clean fixtures of each build, the clean fixtures wanted, how many of the judged build's were taken past
the window (``fix_nearby``), and, for a build short of the ratio, the rule that kept out the most.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_endpoint import serve  # noqa: E402  (a development tool beside the tests)

from miner import open_output  # noqa: E402


def build(name: str, path: str, out: Path, jobs: int, judge: str | None) -> dict[str, Any]:
    """One build's report of the repository (``--json``)."""
    args = [sys.executable, "-m", "miner", "build", f"{name}={path}", "--out", str(out), "-q", "--json", "-j", str(jobs)]
    args += ["--force"] if out.exists() else []
    args += ["--judge", judge] if judge else []
    env = {**os.environ, "OPENAI_API_KEY": "stand-in"}  # the stand-in endpoint takes any key
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"miner build {name} failed: {done.stderr.strip()[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)["repositories"][0]
    return report


def row(name: str, default: dict[str, Any], judged: dict[str, Any], out: Path) -> str:
    def counts(report: dict[str, Any]) -> str:
        quota, fixtures = report.get("clean_quota") or {}, report["fixtures"]
        return f"{fixtures['bug']:>4} / {fixtures['clean']:>3} of {quota.get('wanted', '?'):>3}"

    past = sum(1 for a in open_output(out).answers() if a.kind == "clean" and a.fix_nearby)
    short = [
        f"{kind} short: kept out most by {q['stopped_most']} ({q['stopped_most_count']})"
        + (", too few changes exist" if q["too_few_changes"] else "")
        for kind, report in (("default", default), ("judged", judged))
        if (q := report.get("clean_quota")) and not q["reached"]
    ]
    return f"{name:<16} {counts(default):<20} {counts(judged):<20} {past:>4}  {'; '.join(short)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", metavar="NAME=PATH")
    parser.add_argument("--out", type=Path, help="keep the outputs here (default: a temporary folder)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    if not all("=" in r for r in args.repos):
        parser.error("give each repository as NAME=PATH")
    root = args.out or Path(tempfile.mkdtemp(prefix="clean-quota-"))
    print(f"{'repository':<16} {'default bug / clean':<20} {'judged bug / clean':<20} {'past the window'}")
    with serve() as endpoint:
        judge = f"{sys.executable} -m miner judge --url {endpoint.url} --model stand-in"
        for spec in args.repos:
            name, path = spec.split("=", 1)
            default = build(name, path, root / f"{name}-default", args.jobs, None)
            judged = build(name, path, root / f"{name}-judged", args.jobs, judge)
            print(row(name, default, judged, root / f"{name}-judged"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
