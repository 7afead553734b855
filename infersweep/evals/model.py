"""The lm-eval model ``infersweep``: lm-eval renders prompts and scores, our client sends.

lm-eval hands ``generate_until`` the rendered prompts (few-shot examples included) and the
task's generation settings; this model sends them through :class:`EvalClient` (streaming,
retries counted, failures named) and returns the texts. Prompts, few-shot sampling,
filters, metrics and sample logs stay lm-eval's. A request that failed returns an empty
text to lm-eval, and its record (``client.records``) says why, so a check can tell a failed
request from a wrong answer.
"""

from __future__ import annotations

import json

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from infersweep.evals.client import EvalClient

NAME = "infersweep"


@register_model(NAME)
class TransportLM(LM):
    def __init__(self, client: EvalClient | None = None, **_ignored) -> None:
        super().__init__()
        if client is None:
            raise ValueError("the infersweep model is built by `infersweep eval gsm8k`, "
                             "which passes it a client")
        self.client = client

    # --- what GSM8K needs -------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        items = []
        for req in requests:
            context, gen_kwargs = req.args[0], dict(req.args[1] or {})
            stop = gen_kwargs.get("until") or []
            if isinstance(stop, str):
                stop = [stop]
            if self.client.ep.chat:
                context = json.loads(getattr(context, "prompt", context))
            items.append((context, list(stop), getattr(req, "doc_id", None)))
        return self.client.generate(items)

    # --- chat: messages travel as JSON through lm-eval's string prompts -----------------
    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True) -> str:
        return json.dumps(chat_history, ensure_ascii=False)

    @property
    def tokenizer_name(self) -> str:
        return "server-side-chat-template"

    def chat_template(self, chat_template: bool | str = False) -> str:
        return ""

    # --- not used by generation tasks ---------------------------------------------------
    def loglikelihood(self, requests):
        raise NotImplementedError("the infersweep model only generates (generate_until tasks)")

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError("the infersweep model only generates (generate_until tasks)")
