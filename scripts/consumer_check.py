"""Load miner's exports with the tools they are made for, and check what each tool sees.

    python -m venv /tmp/consumers && /tmp/consumers/bin/pip install inspect_ai datasets
    /tmp/consumers/bin/python scripts/consumer_check.py EXPORTS_DIR

EXPORTS_DIR holds `inspect/` and `hf/`, made by `miner export OUT --format inspect|hf --to ...`. The script
runs in an environment that has inspect_ai and datasets (miner itself is not needed there):

- inspect: `inspect_ai.dataset.json_dataset` with no field mapping: every sample has an id and an input,
  and a target exactly when the export held the answer;
- hf: `datasets.load_dataset` on the folder, reading the configurations its card declares: `visible` and
  `answers`, each with `dev` and `heldout` splits, and no answer field among the visible columns.

Prints what it loaded; exits 1 on any mismatch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ANSWER_FIELDS = {"kind", "defects", "base", "head", "family", "observed_days", "clean_confidence"}


def main() -> int:
    where = Path(sys.argv[1])
    problems = []
    from inspect_ai.dataset import json_dataset

    raw = [json.loads(line) for line in (where / "inspect" / "samples.jsonl").read_text().splitlines()]
    samples = json_dataset(str(where / "inspect" / "samples.jsonl"))
    for record, sample in zip(raw, samples):
        if sample.id != record["id"] or sample.input != record["input"]:
            problems.append(f"inspect: sample {record['id']} loaded differently")
        if ("target" in record) != bool(sample.target):
            problems.append(f"inspect: target of {record['id']}")
    print(f"inspect_ai json_dataset: {len(samples)} samples, {sum(bool(s.target) for s in samples)} with a target")

    import datasets

    for config in ("visible", "answers"):
        loaded = datasets.load_dataset(str(where / "hf"), config)
        sizes = {split: len(part) for split, part in loaded.items()}
        print(f"datasets load_dataset {config}: {sizes}")
        if set(loaded) - {"dev", "heldout"}:
            problems.append(f"hf {config}: splits {sorted(loaded)}")
        if config == "visible":
            for part in loaded.values():
                leaked = ANSWER_FIELDS & set(part.column_names)
                if leaked:
                    problems.append(f"hf visible has answer columns {sorted(leaked)}")
    for problem in problems:
        print("PROBLEM: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
