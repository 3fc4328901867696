"""The vet stage's answer for every source file changed by every non-merge commit of a repository.

One line a changed file: the commit (12 digits), the path, and what ``miner.stages.vet.neutral``
says of that file alone (``layout``, ``types``, ``messages``, ``generated``, or ``None`` when the
change may alter behaviour). A change to the vet stage meant to give the same answers faster is
checked by running this with the old tree and the new one and comparing the two files; the time the
answers took is printed on stderr.

Example (the old tree from git, the new one as installed):
    git archive v-old miner | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python scripts/vet_answers.py /path/to/repo old.txt
    python scripts/vet_answers.py /path/to/repo new.txt
    cmp old.txt new.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from miner.core.classify import path_kind
from miner.core.config import load_config
from miner.git import Repo
from miner.stages.vet import neutral, sides_reader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    config = load_config()
    repo = Repo(args.repo)
    shas = repo.run("rev-list", "--no-merges", "HEAD").decode().split()
    seconds, asked = 0.0, 0
    with args.out.open("w") as out:
        for sha, diffs in repo.diffs(shas):
            meta = repo.meta(sha)
            if meta is None or not meta.parents:
                continue
            sides = sides_reader(repo.blob, meta.parents[0], sha)
            for diff in diffs:
                path = diff.new_path or diff.old_path or ""
                if diff.link or diff.binary or path_kind(path, config.paths) != "source":
                    continue
                started = time.perf_counter()
                how = neutral([diff], sides, config)
                seconds += time.perf_counter() - started
                asked += 1
                out.write(f"{sha[:12]} {path} {how}\n")
    print(f"{args.repo}: {asked} changed source files, vet answered in {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
