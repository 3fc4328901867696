#!/usr/bin/env python3
"""A judge for ``miner build --judge`` that gives the answers a judge once gave, looked up by commit ids.

    scripts/bench_validity.py --mirrors DIR --role heldout --judge "python scripts/replay_judge.py validity/judge.jsonl"

``validity/judge.jsonl`` holds, one JSON line each, what a packet-only judge answered (see validity/README.md):
``{"repository", "kind", "change", "fix" (bug packets), the rubric's answers, "reason", ...}``. A packet is
matched by its kind, change and fix; one that was never answered has no answer (exit 3): the build leaves the
candidate out (``judge_unanswered``), or keeps it marked with ``--keep-unjudged``. This reproduces a measured judge's
effect on a build without asking the judge again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: replay_judge.py FILE (a judge.jsonl of recorded answers)", file=sys.stderr)
        return 2
    try:
        packet = json.loads(sys.stdin.read())
        kind = packet["kind"]
        wanted = (kind, packet["change"], packet["fix"]["commit"] if kind == "bug" else None)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"the packet on stdin is not one miner build --judge sends ({exc})", file=sys.stderr)
        return 2
    try:
        lines = Path(argv[1]).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        print(f"cannot read {argv[1]}: {exc.strerror}", file=sys.stderr)
        return 2
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
            found = (record["kind"], record["change"], record.get("fix")) == wanted
        except (ValueError, KeyError, TypeError) as exc:
            print(f"{argv[1]} line {n} is not a recorded answer ({exc})", file=sys.stderr)
            return 2
        if found:  # miner reads the rubric's answers and the reason, and nothing else, from the record
            print(json.dumps(record))
            return 0
    print(f"no recorded answer for this {kind} packet", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
