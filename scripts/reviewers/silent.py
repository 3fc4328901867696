"""A reviewer that says nothing: recall 0 and no false alarms, the floor of every score.

miner review OUT --cmd "python scripts/reviewers/silent.py" --name silent
"""

import sys

sys.stdin.read()
print("[]")
