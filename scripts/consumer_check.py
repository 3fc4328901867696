"""Load miner's exports with the tools they are made for, and check what each tool sees.

    python -m venv /tmp/consumers && /tmp/consumers/bin/pip install inspect_ai datasets
    /tmp/consumers/bin/python scripts/consumer_check.py EXPORTS_DIR

EXPORTS_DIR holds `inspect/` and `hf/`, made by `miner export OUT --format inspect|hf --to ...`. The script
runs in an environment that has inspect_ai and datasets (miner itself is not needed there):

- inspect: `inspect_ai.dataset.json_dataset` with no field mapping: every sample has an id and an input,
  and a target exactly when the export held the answer; then an Inspect eval of the samples with a target,
  a mock model that always answers "[]" and miner's scorer (`miner.inspect_scorer`, so miner must be
  installed there too): every clean sample must score 1 and every bug sample 0;
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
    problems += _inspect_eval([s for s in samples if s.target])

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


def _inspect_eval(samples: list) -> list[str]:
    """An Inspect eval of a silent reviewer, scored by miner's scorer."""
    import tempfile

    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from miner import miner_findings

    outputs = []
    for _ in samples:
        output = ModelOutput.from_content(model="mockllm/model", content="[]")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outputs.append(output)
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(
        Task(dataset=samples, solver=generate(), scorer=miner_findings()),
        model=model,
        log_dir=tempfile.mkdtemp(prefix="miner-inspect-"),
        display="none",
    )
    got = [
        (json.loads(str(s.target))["kind"], float(next(iter(s.scores.values())).value))  # type: ignore[arg-type]
        for s in log.samples or []
        if s.scores
    ]
    print(
        f"inspect eval ({log.status}): {len(got)} samples scored; silent reviewer: "
        f"clean {sorted({v for k, v in got if k == 'clean'})}, bug {sorted({v for k, v in got if k == 'bug'})}"
    )
    wrong = [k for k, v in got if v != (1.0 if k == "clean" else 0.0)]
    return ([f"inspect eval: {len(wrong)} samples scored wrongly"] if wrong else []) + (
        [f"inspect eval scored {len(got)} of {len(samples)}"] if len(got) != len(samples) else []
    )


if __name__ == "__main__":
    sys.exit(main())
