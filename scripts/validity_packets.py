#!/usr/bin/env python3
"""Packets for reading fixtures with the rubric: what a reader needs to judge each one.

    scripts/bench_validity.py --mirrors DIR --sample 20 --keep OUT --list-unjudged todo.jsonl
    scripts/validity_packets.py todo.jsonl --mirrors DIR --to packets/

writes one Markdown file per repository and kind (``bug-<name>.md``, ``clean-<name>.md``): each fixture's
reading page as ``miner validity sample`` writes it (the visible part, the answer's defect lines with their
text, each fix's message and diff and the commits in between; for a clean fixture its later rewrites).
Give a reader (a person, or a helper session) the rubric (ADJUDICATION.md) and one file; its verdicts, one
JSON line each as the rubric's record says, go into ``validity/bugs.jsonl`` or ``validity/clean.jsonl`` with
``sampled_from`` saying how the fixtures were drawn. The reader has the clone's path to read more.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from adjudication import load  # beside this file

from miner import Repo, load_config, open_output, reading_page

ROOT = Path(__file__).resolve().parent.parent


def packet(row: dict[str, Any], repo: Repo, url: str, pid: str) -> str:
    """One fixture's page, as ``miner validity sample`` writes it, under a heading that names the packet."""
    fixtures = open_output(Path(str(row["out"])))
    head = next(r.head for r in fixtures.manifest.repositories if r.name == row["repository"])
    header = [f"## Packet {pid}", f"repository: {url}", f"clone (read-only): {repo.git_dir}", ""]
    return "\n".join(header) + reading_page(fixtures[str(row["fixture"])], repo, head, load_config())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("todo", type=Path, help="the --list-unjudged file of bench_validity.py")
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--to", type=Path, required=True)
    parser.add_argument("--validity", type=Path, default=ROOT / "validity")
    args = parser.parse_args()
    urls = {e.name: e.url for e in load(args.validity).repositories}
    groups: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for line in args.todo.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        groups[(row["kind"], row["repository"])].append(row)
    args.to.mkdir(parents=True, exist_ok=True)
    for (kind, name), rows in sorted(groups.items()):
        owner_name = urls[name].split("github.com/")[-1].replace("/", "+")
        clone = next(
            p for p in (args.mirrors / owner_name / "repo", args.mirrors / owner_name, args.mirrors / name) if p.exists()
        )
        repo = Repo(clone)
        texts = [packet(row, repo, urls[name], f"{name}-{kind[0]}{n:02d}") for n, row in enumerate(rows, 1)]
        (args.to / f"{kind}-{name}.md").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
        print(f"{kind}-{name}.md: {len(rows)} packets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
