#!/usr/bin/env python3
"""A TOY judge for ``miner build --judge``: it shows the judged road without a model, and judges nothing well.

    miner build REPO --out OUT --judge "python scripts/toy_judge.py"

It exists for the README's tour (and its test), so that the judged road runs on any machine in a second.
It reads one packet on stdin and answers the rubric's questions from what the packet shows, by two
mechanical rules instead of reading the code:

- a bug pair is refused (``defect_in_change: unsure``) when the packet holds commits between the change and
  the fix that changed the marked files (``between``): a later commit may be what made the lines wrong, and
  a real judge reads those commits to decide; otherwise it is accepted;
- a clean candidate is refused (``later_fixed: unsure``) when the packet holds later commits that rewrote
  its lines (``later``); otherwise it is accepted.

The measured judged road (docs/judge.md) used a model reading each packet with
``miner/commands/judge_prompt.md``; use ``miner judge`` or your own reader for real fixtures.
"""

from __future__ import annotations

import json
import sys


def answer(packet: dict) -> dict[str, str]:
    """The rubric's answers for one packet, by the toy's two rules."""
    if packet["kind"] == "bug":
        doubtful = bool(packet.get("between"))
        return {
            "fix_is_bugfix": "yes",
            "defect_in_change": "unsure" if doubtful else "introduced",
            "lines_right": "yes",
            "reason": "toy judge: a commit in between touched the marked files" if doubtful else "toy judge: nothing in between",
        }
    rewritten = bool(packet.get("later"))
    return {
        "plausible_pr": "yes",
        "later_fixed": "unsure" if rewritten else "no",
        "real_defect": "no",
        "reason": "toy judge: a later commit rewrote its lines" if rewritten else "toy judge: no later commit rewrote its lines",
    }


def main() -> int:
    try:
        packet = json.loads(sys.stdin.read())
        print(json.dumps(answer(packet)))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        print(f"the packet on stdin is not one miner build --judge sends ({exc}); run this as --judge", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
