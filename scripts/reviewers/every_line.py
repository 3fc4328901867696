"""A reviewer that flags every line the change adds: the recall a line-level guess reaches, and
the false alarms it costs.

    miner review OUT --cmd "python scripts/reviewers/every_line.py" --name every-line
"""

import json
import re
import sys

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def added_lines(diff: str) -> dict[str, list[int]]:
    """Path -> the numbers (in the changed version) of the lines a unified diff adds."""
    out: dict[str, list[int]] = {}
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
            out.setdefault(path, []).append(line)
            line += 1
        elif path and text.startswith(" "):
            line += 1
    return out


if __name__ == "__main__":
    visible = json.load(sys.stdin)
    print(
        json.dumps(
            [
                {"path": path, "line_start": n, "severity": "warning", "message": "look at this line"}
                for path, lines in added_lines(visible["diff"]).items()
                for n in lines
            ]
        )
    )
