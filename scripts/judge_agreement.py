#!/usr/bin/env python3
"""How a recorded judge agrees with the readers, over every fixture both answered.

    python scripts/judge_agreement.py [--validity DIR] [--drawn TAG ...] [--role ROLE ...]

``validity/judge.jsonl`` holds what a packet-only judge answered (``drawn`` says which run), and
``bugs.jsonl`` / ``clean.jsonl`` what readers with the clone decided. For each kind this prints how many
fixtures both answered, and of those the judge kept (its answers make the fixture valid) or refused, split
by the readers' verdict: ``retention`` is the share of the readers' valid fixtures the judge keeps, and
``kept valid`` the share of what it keeps that the readers found valid (a judged set's validity, were the
judge asked about exactly these). A bug record is matched to the reading of its (change, fix) pair.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from adjudication import load  # beside this file

from miner import MinerError, Rate, is_valid

ROOT = Path(__file__).resolve().parent.parent


def counts(validity: Path, drawn: set[str], roles: set[str]) -> dict[str, Counter[str]]:
    data = load(validity)
    wanted = {e.url for e in data.repositories if not roles or e.role in roles}
    readers: dict[tuple[str, str, str | None], bool] = {}
    for b in data.bugs:
        for fix in b.fixes:
            readers[("bug", b.change, fix)] = b.valid
    for c in data.clean:
        readers[("clean", c.change, None)] = c.valid
    found: dict[str, Counter[str]] = {"bug": Counter(), "clean": Counter()}
    for n, line in enumerate((validity / "judge.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
            key = (record["kind"], record["change"], record.get("fix"))
        except (ValueError, KeyError, TypeError) as exc:
            raise MinerError(f"{validity / 'judge.jsonl'} line {n} is not a recorded answer ({exc})") from exc
        if (drawn and record.get("drawn") not in drawn) or record["repository"] not in wanted or key not in readers:
            continue
        kept = is_valid(record["kind"], record)
        found[record["kind"]][f"{'kept' if kept else 'refused'}_{'valid' if readers[key] else 'invalid'}"] += 1
    return found


def table(found: dict[str, Counter[str]]) -> str:
    lines = []
    for kind, c in found.items():
        both = sum(c.values())
        if not both:
            continue
        kv, ki, rv, ri = c["kept_valid"], c["kept_invalid"], c["refused_valid"], c["refused_invalid"]
        lines.append(
            f"{kind}: {both} answered by both, agree {kv + ri}; kept {kv} valid + {ki} invalid, refused {rv} valid + "
            f"{ri} invalid; retention {Rate(kv, kv + rv).text()}; kept valid {Rate(kv, kv + ki).text()}"
        )
    return "\n".join(lines) or "no fixture answered by both"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validity", type=Path, default=ROOT / "validity", help="the adjudicated set (validity/)")
    parser.add_argument("--drawn", nargs="*", default=[], help="only the judge's records of these runs (their `drawn`)")
    parser.add_argument("--role", nargs="*", default=[], help="only the repositories of these roles")
    args = parser.parse_args()
    try:
        print(table(counts(args.validity, set(args.drawn), set(args.role))))
    except MinerError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
