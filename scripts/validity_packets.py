#!/usr/bin/env python3
"""Packets for reading fixtures with the rubric: what a reader needs to judge each one.

    scripts/bench_validity.py --mirrors DIR --sample 20 --keep OUT --list-unjudged todo.jsonl
    scripts/validity_packets.py todo.jsonl --mirrors DIR --to packets/

writes one Markdown file per repository and kind (``bug-<name>.md``, ``clean-<name>.md``). A bug packet
holds the visible title, description and diff, the answer's defect lines with their text, and each fix's
message and diff; a clean packet the visible part and the mined head, to follow the change's lines through
later history. Give a reader (a person, or a helper session) the rubric (ADJUDICATION.md) and one file;
its verdicts, one JSON line each as the rubric's record says, go into ``validity/bugs.jsonl`` or
``validity/clean.jsonl`` with ``sampled_from`` saying how the fixtures were drawn. Long diffs are cut; the
reader has the clone's path to read them whole.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from adjudication import load  # beside this file

from miner import Repo, decode

ROOT = Path(__file__).resolve().parent.parent


def cut(text: str, lines: int) -> str:
    parts = text.split("\n")
    return text if len(parts) <= lines else "\n".join(parts[:lines]) + f"\n... [{len(parts) - lines} more lines cut]"


def packet(row: dict[str, Any], repo: Repo, url: str, pid: str) -> str:
    out = Path(str(row["out"]))
    visible = json.loads((out / "visible" / f"{row['fixture']}.json").read_text(encoding="utf-8"))
    answer = json.loads((out / "answers" / f"{row['fixture']}.json").read_text(encoding="utf-8"))
    text = [f"## Packet {pid}", f"repository: {url}", f"clone (read-only): {repo.git_dir}", f"change: {answer['head']}"]
    if row["kind"] == "clean":
        text.append(f"mined head (end of the history to follow): {repo.resolve('HEAD')}")
    else:
        text.append(f"fixes to judge: {' '.join(row['fixes'])}")
    text += [
        "",
        "### Visible title",
        visible["title"],
        "",
        "### Visible description",
        visible["description"] or "(empty)",
        "",
        "### Visible diff",
        "```diff",
        cut(visible["diff"], 300 if row["kind"] == "clean" else 250),
        "```",
        "",
    ]
    files = {f["path"]: f for f in visible["files"]}
    for fix in row.get("fixes") or []:
        text.append(f"### Answer: defect lines marked for fix {fix}")
        for d in answer["defects"]:
            if d["fix"] != fix:
                continue
            text.append(f"- {d['path']} lines {d['line_start']}-{d['line_end']}")
            after = (files.get(d["path"]) or {}).get("after") or ""
            lines = after.split("\n")
            for n in range(d["line_start"], min(d["line_end"], d["line_start"] + 15) + 1):
                if n <= len(lines):
                    text.append(f"    {n:5d}| {lines[n - 1]}")
        meta = repo.meta(fix)
        patch = decode(repo.patch(repo.first_parent(fix), fix))[0]
        text += [
            "",
            f"### Fix {fix}: message",
            meta.message.strip() if meta else "",
            "",
            f"### Fix {fix}: diff",
            "```diff",
            cut(patch, 200),
            "```",
            "",
        ]
    return "\n".join(text)


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
