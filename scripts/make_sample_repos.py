"""Build every sample repository spec under sample_repos/ into DEST/<name>.

Example:
    python scripts/make_sample_repos.py /tmp/samples
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the builder lives beside the tests

from samples import build_all  # noqa: E402

from miner import MinerError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent / "sample_repos"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: make_sample_repos.py DEST", file=sys.stderr)
        return 2
    dest = Path(argv[0]).resolve()  # git fast-import runs inside each new repository: a relative DEST would miss
    if dest.exists() and any(dest.iterdir()):
        print(f"error: {dest} is not empty; give a new or empty directory", file=sys.stderr)
        return 2
    try:
        built = build_all(ROOT, dest)
    except MinerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, commits in built.items():
        print(f"{dest / name}: {len(commits)} commits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
