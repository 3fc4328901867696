"""A real static analyzer as a reviewer: ruff's default rules on the Python files the change touches,
reporting only what it finds on lines the change added (what a reviewer of the change would say).

    miner review OUT --cmd "python scripts/reviewers/ruff_reviewer.py" --name ruff

Needs ruff on PATH (it comes with miner's test extra). Files in other languages get no findings.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from every_line import added_lines  # beside this file


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
        proc = subprocess.run(
            [ruff, "check", "--isolated", "--output-format", "json", "--exit-zero", "."],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        )
        for item in json.loads(proc.stdout or "[]"):
            path = str(Path(item["filename"]).resolve().relative_to(Path(tmp).resolve()))
            line = item["location"]["row"]
            if line in added.get(path, []):
                findings.append(
                    {
                        "path": path,
                        "line_start": line,
                        "line_end": item["end_location"]["row"],
                        "severity": "warning",
                        "category": item["code"],
                        "message": item["message"],
                    }
                )
    print(json.dumps(findings))


main()
