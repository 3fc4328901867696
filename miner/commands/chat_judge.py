"""``miner judge``: a ready judge for ``miner build --judge`` that asks a chat model.

It reads one packet (the JSON ``miner build`` sends on stdin, see ``miner.stages.judge``), asks a
model behind an OpenAI-compatible chat-completions endpoint (OpenAI, a vLLM, llama.cpp or Ollama
server, a LiteLLM proxy in front of another provider) with the rubric in ``judge_prompt.md``, and
returns the rubric's answers as ``miner build`` reads them, with what the answer cost.

The calls go through the ``openai`` package (``pip install 'miner[judge]'``), which retries a rate
limit (429, waiting as its ``Retry-After`` says), a server error, a timeout or a dropped connection
with backoff; a reply that is not the rubric's answer is asked again, ``reasks`` times at most. The
tokens the endpoint reports for every reply, those asked again included, are summed. The key is read
from an environment variable, never from the command line: the judge's command line is part of the
digest its verdicts are cached under, and may be shown in logs.

``miner build`` runs a ``miner judge`` command in its own process (``command_model`` reads its
options), so thousands of calls do not start thousands of processes.

Example:

    miner build repo --judge "miner judge --model gpt-4.1"
"""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from miner.core.errors import JudgeError, MinerError
from miner.stages.judge import ANSWERS, Reply

DEFAULT_URL = "https://api.openai.com/v1"
OPTIONAL = frozenset({"reviewable"})  # asked by the shipped instruction, but no reason to refuse an answer


@dataclass(frozen=True)
class ChatModel:
    """Where the model is and how it is asked."""

    model: str
    url: str = DEFAULT_URL
    key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0  # one request; a request that times out is retried
    max_chars: int = 60_000  # of the packet's diffs: the rest is cut, with a note saying how much
    prompt: Path | None = None  # the instruction, if not the shipped one
    retries: int = 8  # of one request, on a rate limit, a server error, a timeout or a dropped connection
    reasks: int = 2  # times a reply that is not the rubric's answer is asked again


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
        if name in OPTIONAL and found.get(name) is None:  # an instruction of a team's own may not ask it
            continue
        got = str(found.get(name, "")).strip().lower()
        if got not in allowed:
            raise JudgeError(f"the model answered {name}={found.get(name)!r}, not one of {'|'.join(allowed)}")
        out[name] = got
    out["reason"] = str(found.get("reason") or "")[:500]
    return out


@dataclass
class _Spent:
    """What asking has cost so far: tokens as the endpoint reported them, and requests sent again."""

    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0

    def reply(self, answers: dict[str, str] | None = None, error: str | None = None) -> Reply:
        return Reply(answers, error, self.input_tokens, self.output_tokens, self.retries)


@dataclass
class ChatClient:
    """One ``openai`` client for a model, shared by the threads that ask it (it is thread-safe)."""

    model: ChatModel
    _client: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError:
                    raise MinerError("miner judge needs the openai package: pip install 'miner[judge]'") from None
                self._client = openai.OpenAI(
                    base_url=self.model.url,
                    api_key=os.environ.get(self.model.key_env) or "none",  # a local server takes any key
                    timeout=self.model.timeout,
                    max_retries=self.model.retries,
                )
            return self._client

    def ask(self, packet: dict[str, Any]) -> Reply:
        """The rubric's answers for one packet, or why there are none; never raises for the endpoint's faults."""
        kind = packet.get("kind")
        if kind not in ANSWERS:
            raise MinerError("the packet is not one miner build --judge sends (no kind bug or clean)")
        import openai

        client = self._openai()
        messages = [
            {"role": "system", "content": instruction(self.model)},
            {"role": "user", "content": json.dumps(trimmed(packet, self.model.max_chars), indent=1)},
        ]
        spent = _Spent()
        last = "no reply"
        for attempt in range(self.model.reasks + 1):
            spent.retries += attempt > 0  # a reply asked again is one more request
            try:
                raw = client.chat.completions.with_raw_response.create(model=self.model.model, temperature=0, messages=messages)
                spent.retries += int(getattr(raw, "retries_taken", 0) or 0)
                completion = raw.parse()
            except openai.APIStatusError as exc:
                return spent.reply(error=_status_error(exc, self.model))
            except openai.APITimeoutError:
                spent.retries += self.model.retries
                waited = f"{self.model.timeout:g} s, {self.model.retries + 1} times"
                return spent.reply(error=f"the model endpoint did not answer within {waited}")
            except openai.APIConnectionError as exc:
                spent.retries += self.model.retries
                return spent.reply(error=f"cannot reach the model endpoint {self.model.url}: {exc.__cause__ or exc}; check --url")
            except (ValueError, openai.APIResponseValidationError) as exc:  # a body that is not the API's JSON
                last = f"the model endpoint's answer is not a chat completion ({str(exc)[:80]})"
                continue
            usage = getattr(completion, "usage", None)
            spent.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            spent.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
            try:
                content = completion.choices[0].message.content
            except (AttributeError, IndexError, TypeError):
                last = "the model endpoint's answer has no choices[0].message.content; is it a chat-completions API?"
                continue
            try:
                return spent.reply(answer(str(content or ""), str(kind)))
            except JudgeError as exc:
                last = str(exc)
        return spent.reply(error=f"{last} (asked {self.model.reasks + 1} times)")


def _status_error(exc: Any, model: ChatModel) -> str:
    """One line for an HTTP error the client gave up on (after its retries, where it retries)."""
    detail = str(getattr(exc, "message", "") or exc).strip().replace("\n", " ")[:160]
    hint = f"; is {model.key_env} set?" if exc.status_code in (401, 403) else ""
    return f"the model endpoint answered HTTP {exc.status_code}: {detail}{hint}"


_CLIENTS: dict[ChatModel, ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(model: ChatModel) -> ChatClient:
    """The one client of a model in this process."""
    with _CLIENTS_LOCK:
        return _CLIENTS.setdefault(model, ChatClient(model))


def chat_runner(model: ChatModel) -> Callable[[dict[str, Any]], Reply]:
    """What ``miner build`` asks a ``miner judge`` command through, in its own process. The ``openai``
    package is looked for now, so a build without it stops before it mines anything."""
    try:
        import openai  # noqa: F401
    except ImportError:
        raise MinerError("--judge 'miner judge ...' needs the openai package: pip install 'miner[judge]'") from None
    return client_for(model).ask


def ask_model(packet: dict[str, Any], model: ChatModel) -> Reply:
    """Ask the model about one packet: the rubric's answers for its kind, or the error, with what it cost."""
    return client_for(model).ask(packet)


def command_model(command: str) -> ChatModel | None:
    """The model a ``--judge`` command asks, when the command is ``miner judge ...`` (or ``python -m
    miner judge ...``): ``miner build`` then asks it in its own process. None for any other command."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) >= 2 and Path(argv[0]).name == "miner" and argv[1] == "judge":
        rest = argv[2:]
    elif len(argv) >= 4 and Path(argv[0]).name.startswith("python") and argv[1:4] == ["-m", "miner", "judge"]:
        rest = argv[4:]
    else:
        return None
    from miner.cli import judge_model

    return judge_model(rest)
