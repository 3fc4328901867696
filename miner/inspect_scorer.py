"""A scorer for Inspect (``inspect_ai``) that scores with miner's matching; importable only where
inspect_ai is installed. With the samples of ``miner export --format inspect``::

    from inspect_ai import Task, task
    from inspect_ai.dataset import json_dataset
    from inspect_ai.solver import generate
    from miner.inspect_scorer import miner_findings

    @task
    def review():
        return Task(dataset=json_dataset("samples.jsonl"), solver=generate(), scorer=miner_findings())

The model's completion must be miner's findings format; the sample's target is the answer the
export wrote. A bug fixture scores the share of its defects matched, a clean one 1 with no false alarm.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from miner.commands.score import Lines, score_output


@scorer(metrics=[mean()])
def miner_findings(tolerance: int = 3) -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        answer = json.loads(target.text)
        defects = [Lines(d["path"], d["line_start"], d["line_end"]) for d in answer["defects"]]
        value, _, why = score_output(state.output.completion, answer["kind"], defects, tolerance)
        return Score(value=value, answer=state.output.completion, explanation=why)

    return score
