"""``miner explain``: the evidence chain of one fixture, for a person to read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from miner.errors import OutputDirError
from miner.write import MANIFEST


def load_output(out: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise OutputDirError(f"{out} has no {MANIFEST}; give a directory written by `miner build`") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise OutputDirError(f"{out / MANIFEST} cannot be read ({exc}); rebuild with `miner build --force`") from exc
    return manifest


def find_entry(out: Path, fixture_id: str) -> dict[str, Any]:
    manifest = load_output(out)
    for entry in manifest["fixtures"]:
        if entry["id"] == fixture_id:
            return dict(entry)
    raise OutputDirError(f"no fixture {fixture_id!r} in {out}; list them with `jq '.fixtures[].id' {out / MANIFEST}`")


def explain(out: Path, fixture_id: str) -> str:
    entry = find_entry(out, fixture_id)
    answer = json.loads((out / entry["answer"]).read_text(encoding="utf-8"))
    visible = json.loads((out / entry["visible"]).read_text(encoding="utf-8"))
    lines = [
        f"{fixture_id}: {answer['kind']} fixture from {answer['repository']} (split {answer['split']})",
        f"change  {answer['head']}  committed {answer['head_date']}",
        f"base    {answer['base'] or '(none: root commit)'}",
        f"title   {visible['title']!r} (description mode: {answer['description_mode']})",
    ]
    if answer["kind"] == "clean":
        lines.append(f"clean: observed for {answer['observed_days']} days with no fix blaming or naming it")
    for n, defect in enumerate(answer["defects"] or [], 1):
        ev = defect["evidence"]
        lines += [
            f"defect {n}: {defect['path']} lines {defect['line_start']}-{defect['line_end']}",
            f"  fixed by {defect['fix']} on {defect['fix_date']}: {defect['summary']!r}",
            f"  link {ev['link']}, tier {ev['tier']}: {ev['lines_agreeing']} of {ev['lines_blamed']} "
            "blamed code lines of the fix landed on this change",
        ]
        for cand in ev["candidates"]:
            why = f" (rejected: {cand['rejected']})" if cand["rejected"] else ""
            here = " <- this change" if cand["sha"] == answer["head"] else ""
            lines.append(f"    candidate {cand['sha'][:12]}: {cand['lines']} line(s){why}{here}")
        if ev["looked_through"]:
            lines.append("  looked through whitespace-only commits: " + ", ".join(s[:12] for s in ev["looked_through"]))
        if ev.get("reasons"):
            lines.append(f"  tier because: {', '.join(ev['reasons'])}"
                         + (f"; {ev['age_days']} days before the fix" if ev.get("age_days") is not None else ""))
        if ev.get("lines_authored") is not None:
            lines.append(f"  lines this change wrote from scratch: {ev['lines_authored']}")
        if ev.get("prior"):
            lines.append("  it rewrote lines first written by: " + ", ".join(s[:12] for s in ev["prior"]))
    for edit in answer["blanked"]:
        lines.append(f"blanked in visible part: {edit['path']}:{edit['line']}: {edit['text']!r}")
    for cutoff, fresh in answer["fresh"].items():
        lines.append(f"cutoff {cutoff}: {'fresh' if fresh else 'not fresh'}")
    return "\n".join(lines)
