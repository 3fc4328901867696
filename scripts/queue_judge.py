#!/usr/bin/env python3
"""A judge for ``miner build --judge`` whose answers come from a folder: for readers who answer in batches
(people, or a model session reading packets), not one call at a time.

    miner build REPO --judge "python scripts/queue_judge.py DIR"     # 1: every new packet is queued
    ... readers write DIR/answers/KEY.json for the packets in DIR/packets/KEY.json ...
    miner build REPO --force --judge "python scripts/queue_judge.py DIR"   # 2: the answers are used

A packet (the JSON miner sends on stdin) is keyed by a digest of its contents. When ``DIR/answers/KEY.json``
holds an answer (the rubric's fields as a JSON object, as ``miner build --judge`` reads it), it is printed.
Otherwise the packet is written to ``DIR/packets/KEY.json`` and the judge says "no answer yet" (exit 3): the
build leaves the candidate out (``judge_unanswered``; ``--keep-unjudged`` keeps it, marked), goes on asking the
others, and does not cache the failure, so the next build asks again. A clean candidate the answers refuse
makes the sample ask about the next one, which the next build queues: run the pair until nothing is queued.
Writes are atomic, so builds that run side by side never see half a packet.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path


def key(packet: object) -> str:
    return hashlib.sha256(json.dumps(packet, sort_keys=True).encode()).hexdigest()[:20]


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: queue_judge.py DIR (the folder that holds packets/ and answers/)", file=sys.stderr)
        return 2
    folder = Path(argv[1])
    try:
        packet = json.loads(sys.stdin.read())
    except ValueError as exc:
        print(f"the packet on stdin is not JSON ({exc}); run this as miner build --judge", file=sys.stderr)
        return 2
    name = key(packet)
    answer = folder / "answers" / f"{name}.json"
    if answer.exists():
        sys.stdout.write(answer.read_text(encoding="utf-8"))
        return 0
    queued = folder / "packets" / f"{name}.json"
    if not queued.exists():
        write_atomic(queued, json.dumps(packet, indent=1, sort_keys=True) + "\n")
    print(f"not answered yet: the packet is queued as {queued}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
