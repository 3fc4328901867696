"""``miner judge``: a ready judge for ``miner build --judge`` that asks a chat model.

It reads one packet (the JSON ``miner build`` sends on stdin, see ``miner.stages.judge``), asks a
model behind an OpenAI-compatible chat-completions endpoint (OpenAI, a vLLM, llama.cpp or Ollama
server, a LiteLLM proxy in front of another provider) with the rubric in ``judge_prompt.md``, and
returns the rubric's answers as ``miner build`` reads them. The key is read from an environment
variable, never from the command line: the judge's command line is part of the digest its verdicts
are cached under, and may be shown in logs.

Example:

    miner build repo --judge "miner judge --model gpt-4.1"
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from miner.core.errors import JudgeError, MinerError
from miner.stages.judge import ANSWERS


@dataclass(frozen=True)
class ChatModel:
    """Where the model is and how it is asked."""

    model: str
    url: str = "https://api.openai.com/v1"
    key_env: str = "OPENAI_API_KEY"
    timeout: float = 240.0
    max_chars: int = 60_000  # of the packet's diffs: the rest is cut, with a note saying how much
    prompt: Path | None = None  # the instruction, if not the shipped one


def instruction(model: ChatModel) -> str:
    """The judge's instruction: ``model.prompt`` or the rubric shipped with miner."""
    if model.prompt is None:
        return resources.files("miner.commands").joinpath("judge_prompt.md").read_text(encoding="utf-8")
    try:
        return model.prompt.read_text(encoding="utf-8")
    except OSError as exc:
        raise MinerError(f"cannot read the judge prompt {model.prompt}: {exc.strerror}; give --prompt a readable file") from exc


def trimmed(packet: dict[str, Any], limit: int) -> dict[str, Any]:
    """The packet with each diff (the change's, the fix's, each later or in-between commit's) cut to ``limit``
    characters, so that a large change fits a model's context."""

    def cut(text: object) -> object:
        if not isinstance(text, str) or len(text) <= limit:
            return text
        return text[:limit] + f"\n[... {len(text) - limit} more characters cut]"

    out = dict(packet, diff=cut(packet.get("diff")))
    if isinstance(packet.get("fix"), dict):
        out["fix"] = dict(packet["fix"], diff=cut(packet["fix"].get("diff")))
    for commits in ("later", "between"):
        if isinstance(packet.get(commits), list):
            out[commits] = [dict(c, diff=cut(c.get("diff"))) if isinstance(c, dict) else c for c in packet[commits]]
    return out


def answer(reply: str, kind: str) -> dict[str, str]:
    """The rubric's answers in a model's reply (the first JSON object in it), checked field by field."""
    fields = ANSWERS[kind]
    found: dict[str, Any] | None = None
    for match in re.finditer(r"\{", reply):
        try:
            value, _ = json.JSONDecoder().raw_decode(reply[match.start() :])
        except ValueError:
            continue
        if isinstance(value, dict):
            found = value
            break
    if found is None:
        raise JudgeError(f"the model's reply holds no JSON object: {reply.strip()[:120]!r}")
    out: dict[str, str] = {}
    for name, allowed in fields.items():
        got = str(found.get(name, "")).strip().lower()
        if got not in allowed:
            raise JudgeError(f"the model answered {name}={found.get(name)!r}, not one of {'|'.join(allowed)}")
        out[name] = got
    out["reason"] = str(found.get("reason") or "")[:500]
    return out


def ask_model(packet: dict[str, Any], model: ChatModel) -> dict[str, str]:
    """Ask the model about one packet; the rubric's answers for its kind."""
    kind = packet.get("kind")
    if kind not in ANSWERS:
        raise MinerError("the packet on stdin is not one miner build --judge sends (no kind bug or clean)")
    body = {
        "model": model.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": instruction(model)},
            {"role": "user", "content": json.dumps(trimmed(packet, model.max_chars), indent=1)},
        ],
    }
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(model.key_env)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        model.url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=model.timeout) as response:
            data = json.loads(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace").strip().replace("\n", " ")[:160]
        hint = f"; is {model.key_env} set?" if exc.code in (401, 403) else ""
        raise JudgeError(f"the model endpoint answered HTTP {exc.code}: {detail}{hint}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise JudgeError(f"cannot reach the model endpoint {model.url}: {reason}; check --url") from exc
    except ValueError as exc:
        raise JudgeError(f"the model endpoint's answer is not JSON ({exc})") from exc
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise JudgeError("the model endpoint's answer has no choices[0].message.content; is it a chat-completions API?") from exc
    return answer(str(content), str(kind))
