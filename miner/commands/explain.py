"""``miner explain``: the evidence chain of one fixture, for a person to read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from miner.core.output import open_output


def _ranges(defects: list[dict[str, Any]]) -> str:
    """``a.py 3-5, 9; b.py 12``: the lines of some defects, per path in first-seen order."""
    by_path: dict[str, list[str]] = {}
    for d in defects:
        start, end = d["line_start"], d["line_end"]
        by_path.setdefault(d["path"], []).append(str(start) if start == end else f"{start}-{end}")
    return "; ".join(f"{path} {', '.join(spans)}" for path, spans in by_path.items())


def _judged(verdict: dict[str, Any] | None, fields: tuple[str, ...]) -> list[str]:
    """What the judge (``--judge``) said, if it was asked: its answers and reason, or why it has none;
    and what the answer cost."""
    if not verdict:
        return []
    cost = ""
    if verdict.get("input_tokens") or verdict.get("output_tokens"):  # a judge that reports its cost
        cost = f" ({verdict['input_tokens']} + {verdict['output_tokens']} tokens, {verdict.get('retries') or 0} retries)"
    if verdict["status"] == "error":
        return [f"  judge failed ({verdict['error']}): kept unjudged (--keep-unjudged){cost}"]
    if verdict["status"] == "unasked":
        return [f"  judge not asked ({verdict['error']}): kept unjudged (--keep-unjudged)"]
    said = ", ".join(f"{name} {verdict[name]}" for name in fields if verdict.get(name) is not None)
    return [f"  judge: {said}" + (f": {verdict['reason']!r}" if verdict.get("reason") else "") + cost]


def explain(out: Path, fixture_id: str) -> str:
    """The fixture's provenance, then per fix that labelled it: the lines, the link, the tier and
    the blame evidence behind them; the edits made to its visible part; its freshness per cutoff."""
    fixtures = open_output(out)
    fixture = fixtures.require(fixture_id)
    answer, visible = fixture.answer.model_dump(mode="json"), fixture.visible.model_dump(mode="json")
    lines = [
        f"{fixture_id}: {answer['kind']} fixture from {answer['repository']} (split {answer['split']})",
        f"change  {answer['head']}  committed {answer['head_date']}",
        f"base    {answer['base'] or '(none: root commit)'}",
        f"title   {visible['title']!r} (description mode: {answer['description_mode']})",
    ]
    if answer["title_replaced"]:
        lines.append("        made by miner: the author's title had no content once its references went")
    if answer["kind"] == "clean":
        lines.append(f"clean: observed for {answer['observed_days']} days with no fix blaming or naming it")
        where = {"file": "in its own files", "directory": "elsewhere in its directories"}.get(answer.get("fix_nearby") or "")
        if where:
            lines.append(
                f"  a fix followed it {where} within clean.fix_window_days: taken past clean.fix_window_scope to "
                f"fill the clean quota (clean_confidence {answer['clean_confidence']})"
            )
        lines += _judged(answer.get("judge"), ("plausible_pr", "later_fixed", "real_defect"))
    by_fix: dict[str, list[dict[str, Any]]] = {}
    for defect in answer["defects"] or []:  # one label's defects share its fix and its evidence
        by_fix.setdefault(defect["fix"], []).append(defect)
    for n, (fix, defects) in enumerate(by_fix.items(), 1):
        first = defects[0]
        ev = first["evidence"]
        lines += [
            f"fix {n}: {fix} on {first['fix_date']}: {first['summary']!r}",
            f"  defect lines: {_ranges(defects)}",
            f"  link {ev['link']}, tier {ev['tier']}: {ev['lines_agreeing']} of {ev['lines_blamed']} "
            "blamed code lines of the fix landed on this change",
        ]
        for cand in ev["candidates"]:
            why = f" (rejected: {cand['rejected']})" if cand["rejected"] else ""
            here = " <- this change" if cand["sha"] == answer["head"] else ""
            lines.append(f"    candidate {cand['sha'][:12]}: {cand['lines']} line(s){why}{here}")
        if ev["looked_through"]:
            lines.append(
                "  looked through (whitespace-only commits, re-lands of a reverted change): "
                + ", ".join(s[:12] for s in ev["looked_through"])
            )
        if ev.get("reasons"):
            lines.append(
                f"  tier because: {', '.join(ev['reasons'])}"
                + (f"; {ev['age_days']} days before the fix" if ev.get("age_days") is not None else "")
            )
        if ev.get("lines_authored") is not None:
            lines.append(f"  lines this change wrote from scratch: {ev['lines_authored']}")
        if ev.get("prior"):
            lines.append("  it rewrote lines first written by: " + ", ".join(s[:12] for s in ev["prior"]))
        lines += _judged(ev.get("judge"), ("fix_is_bugfix", "defect_in_change", "lines_right", "reviewable"))
    if answer.get("screen"):
        lines.append(f"judge's decision: {answer['screen']}")
    for edit in answer["blanked"]:
        lines.append(f"blanked in visible part: {edit['path']}:{edit['line']}: {edit['text']!r}")
    for cutoff, fresh in answer["fresh"].items():
        lines.append(f"cutoff {cutoff}: {'fresh' if fresh else 'not fresh'}")
    return "\n".join(lines)
