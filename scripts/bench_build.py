"""Benchmark `miner build` against a PyDriller pipeline doing the same work, side by side.

Both pipelines walk the same history with the files each commit changed and its line counts
(miner: `git log --numstat`; PyDriller: `modified_files`), find the same fix commits (miner's
own fix-message rules, so the sets are identical) and blame each fix's deleted lines back to
the commits that last touched them: PyDriller with `Git.get_commits_last_modified_lines` (on a
sample of fixes spread over the whole history, its time scaled to all), miner with its blame
stage; miner goes on to vet fixes, sample clean commits and write the fixtures. Each pipeline runs in its own process,
so its peak memory is its own. Then, on the output miner wrote, two more rows:

- a rebuild after about 1% new commits (first build at an older revision, rebuild at HEAD);
- `--since` the last N days on the already mined output.

Example:
    python scripts/bench_build.py /path/to/repo --jobs 2
    python scripts/bench_build.py /path/to/repo --pydriller-limit 300   # PyDriller on a sample of fixes
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_timed(args: list[str]) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (MB) of the process and the children it waited for, and stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(args)}\n{err.read().decode()[-2000:]}")
        return elapsed, usage.ru_maxrss / 1024, out.read().decode()


def pydriller_pipeline(repo: str, rev: str, limit: int | None) -> None:
    """The pipeline a PyDriller user would write to do miner's work: walk every commit with the
    files it changed and how many lines (what clean sampling reads; miner's walk reads the same),
    find the fixes, blame each with ``get_commits_last_modified_lines``. Prints JSON."""
    from pydriller import Git, Repository

    from miner import fix_link, load_config

    fixes_config = load_config().fixes
    git = Git(repo)
    started = time.perf_counter()
    commits = []
    changed_lines = 0
    for commit in Repository(repo, only_no_merge=True, to_commit=rev).traverse_commits():
        for change in commit.modified_files:  # miner's walk reads the same: `git log --numstat -M`
            changed_lines += change.added_lines + change.deleted_lines
        if fix_link(commit.msg, fixes_config)[0] is not None:
            commits.append(commit)
    walk_seconds = time.perf_counter() - started
    fixes = len(commits)
    # PyDriller walks oldest first, and old fixes blame short histories: a sample of the first N
    # would flatter it. Take every k-th fix across the whole history instead.
    stride = max(1, fixes // limit) if limit else 1
    blamed = 0
    per_fix: list[float] = []
    for commit in commits[::stride][: limit or None]:
        t0 = time.perf_counter()
        found = git.get_commits_last_modified_lines(commit)
        per_fix.append(time.perf_counter() - t0)
        blamed += sum(len(v) for v in found.values())
    print(
        json.dumps(
            {
                "fixes": fixes,
                "walk_seconds": walk_seconds,
                "changed_lines": changed_lines,
                "blamed_fixes": len(per_fix),
                "blamed": blamed,
                "blame_seconds": sum(per_fix),
                "seconds": time.perf_counter() - started,
            }
        )
    )


def missing_objects(repo: str) -> int:
    """How many objects the history of HEAD names that the repository lacks."""
    listed = subprocess.run(
        ["git", "-C", repo, "rev-list", "--objects", "--missing=print", "HEAD"], capture_output=True, check=True
    ).stdout
    return sum(1 for line in listed.splitlines() if line.startswith(b"?"))


def rev_with_new_share(repo: str, share: float) -> tuple[str, int, int]:
    """An ancestor of HEAD from which about `share` of all commits are new."""
    repo = git_dir(repo)
    total = int(
        subprocess.run(
            ["git", f"--git-dir={repo}", "rev-list", "--count", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
    )
    first_parents = subprocess.run(
        ["git", f"--git-dir={repo}", "rev-list", "--first-parent", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.split()
    lo, hi = 1, len(first_parents) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if commits_since(repo, first_parents[mid]) < share * total:
            lo = mid + 1
        else:
            hi = mid
    return first_parents[lo], commits_since(repo, first_parents[lo]), total


def commits_since(repo: str, rev: str) -> int:
    """How many commits HEAD has that ``rev`` has not."""
    args = ["git", f"--git-dir={repo}", "rev-list", "--count", f"{rev}..HEAD"]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return int(out.stdout)


def git_dir(path: str) -> str:
    return subprocess.run(
        ["git", "-C", path, "rev-parse", "--absolute-git-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--pydriller-limit",
        type=int,
        default=None,
        help="blame only N fixes with PyDriller, spread over the history, and scale its time to all fixes",
    )
    parser.add_argument("--since-days", type=int, default=180)
    parser.add_argument("--skip-pydriller", action="store_true")
    args = parser.parse_args()
    miner = [sys.executable, "-m", "miner.cli", "build", "-q", "--json", "-j", str(args.jobs)]
    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        # PyDriller needs a repository with a work tree: both pipelines mine the same local clone
        # (hard-linked objects, no checkout), and the repository given is only read.
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-checkout", git_dir(args.repo), str(clone)], check=True)
        repo = str(clone)
        if not args.skip_pydriller and (missing := missing_objects(repo)):
            print(
                f"{args.repo} lacks {missing} object{'s' * (missing != 1)} its history names (a partial or damaged "
                "clone): PyDriller cannot read them; bench a full clone, or pass --skip-pydriller to time miner alone",
                file=sys.stderr,
            )
            sys.exit(2)
        t_miner, m_miner, report = run_timed([*miner, repo, "--out", str(out / "cold")])
        fixes = sum(r["fixes"] for r in json.loads(report)["repositories"])
        rows.append(("miner build (cold)", t_miner, m_miner, f"{fixes} fixes, all blamed, fixtures written"))
        ratio = ""
        if not args.skip_pydriller:
            t_py, m_py, py_out = run_timed(
                [sys.executable, __file__, "--_pydriller", repo, "HEAD", str(args.pydriller_limit or "")]
            )
            py = json.loads(py_out)
            scaled = t_py
            note = f"{py['fixes']} fixes, {py['blamed_fixes']} blamed"
            per_fix = py["blame_seconds"] / max(1, py["blamed_fixes"])
            if py["blamed_fixes"] < py["fixes"]:
                scaled = t_py + per_fix * (py["fixes"] - py["blamed_fixes"])
                note += f"; time scaled to all fixes ({t_py:.1f}s measured)"
            rows.append(("PyDriller pipeline", scaled, m_py, note))
            rows.append(("  of which the walk (every commit's changed files)", py["walk_seconds"], m_py, "measured in full"))
            rows.append(
                (
                    "  of which the blames",
                    per_fix * py["fixes"],
                    m_py,
                    f"{1000 * per_fix:.0f} ms a fix over {py['blamed_fixes']} fixes spread over the history",
                )
            )
            ratio = f"miner is {scaled / t_miner:.1f}x faster than the PyDriller pipeline"
        old, new, total = rev_with_new_share(repo, 0.01)
        t_base, _, _ = run_timed([*miner, repo, "--rev", old, "--out", str(out / "inc")])
        t_inc, m_inc, _ = run_timed([*miner, repo, "--out", str(out / "inc"), "--force"])
        rows.append(
            (
                f"rebuild after {new} new commits ({100 * new / total:.1f}%)",
                t_inc,
                m_inc,
                f"{100 * t_inc / t_base:.1f}% of the first build at the older revision ({t_base:.1f}s)",
            )
        )
        since = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=args.since_days)).date().isoformat()
        t_since, m_since, _ = run_timed([*miner, repo, "--out", str(out / "cold"), "--force", "--since", since])
        rows.append(
            (f"--since {since} on the mined output", t_since, m_since, f"{100 * t_since / t_miner:.1f}% of the cold build")
        )
    print(
        f"repository: {args.repo} ({total} commits); machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; miner -j {args.jobs}"
    )
    print(f"{'pipeline':<52} {'seconds':>9} {'peak MB':>8}  notes")
    for name, seconds, peak, note in rows:
        print(f"{name:<52} {seconds:>9.2f} {peak:>8.0f}  {note}")
    if ratio:
        print(ratio)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--_pydriller":
        pydriller_pipeline(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None)
    else:
        main()
