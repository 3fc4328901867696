"""A real static analyzer as a reviewer: ruff's default rules on the Python files the change touches,
reporting only what it finds on lines the change added (what a reviewer of the change would say).

    miner review OUT --cmd "python scripts/reviewers/ruff_reviewer.py" --name ruff

Needs ruff on PATH (it comes with miner's test extra). Files in other languages get no findings.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def added_lines(diff: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    path, line = None, 0
    for text in diff.split("\n"):
        if text.startswith("+++ "):
            path = text[6:] if text.startswith("+++ b/") else None
            continue
        match = HUNK.match(text)
        if match:
            line = int(match.group(1))
            continue
        if path and text.startswith("+"):
            out.setdefault(path, set()).add(line)
            line += 1
        elif path and text.startswith(" "):
            line += 1
    return out


def main() -> None:
    visible = json.load(sys.stdin)
    added = added_lines(visible["diff"])
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        for vf in visible["files"]:
            if not vf["path"].endswith(".py") or vf["after"] is None or vf["path"] not in added:
                continue
            where = Path(tmp) / vf["path"]
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(vf["after"], encoding="utf-8")
        proc = subprocess.run([ruff, "check", "--isolated", "--output-format", "json", "--exit-zero", "."], cwd=tmp,
                              capture_output=True, text=True, check=True)
        for item in json.loads(proc.stdout or "[]"):
            path = str(Path(item["filename"]).resolve().relative_to(Path(tmp).resolve()))
            line = item["location"]["row"]
            if line in added.get(path, ()):
                findings.append({"path": path, "line_start": line, "line_end": item["end_location"]["row"],
                                 "severity": "warning", "category": item["code"], "message": item["message"]})
    print(json.dumps(findings))


main()
