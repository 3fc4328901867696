"""A reviewer that flags every line the change adds: the recall a line-level guess reaches, and
the false alarms it costs.

    miner review OUT --cmd "python scripts/reviewers/every_line.py" --name every-line
"""

import json
import re
import sys

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")

visible = json.load(sys.stdin)
findings, path, line = [], None, 0
for text in visible["diff"].split("\n"):
    if text.startswith("+++ "):
        path = text[6:] if text.startswith("+++ b/") else None
        continue
    match = HUNK.match(text)
    if match:
        line = int(match.group(1))
        continue
    if path and text.startswith("+"):
        findings.append({"path": path, "line_start": line, "severity": "warning", "message": "look at this line"})
        line += 1
    elif path and text.startswith(" "):
        line += 1
print(json.dumps(findings))
