"""What each request sends: payload bytes rendered on demand from the seeded plan."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from infersweep.bench import runtime
from infersweep.bench.dataset import Plan, pseudo_text, token_ids


@dataclass
class Workload:
    plan: Plan
    model: str
    chat: bool
    prompt_mode: str  # "ids" (tokenizer-free), "pseudo" (tokenizer-free text), "text" (tokenizer)
    ignore_eos: bool = False
    continuous_usage: bool = True
    texts: list[str] | None = None        # pre-rendered prompts in "text" mode
    text_lens: list[int] | None = None    # their local-tokenizer lengths
    extra: dict = field(default_factory=dict)
    prebuilt: list[bytes] | None = None   # bodies rendered before the run (small workloads)

    def prebuild(self, budget_bytes: int = 256 << 20) -> bool:
        """Render every body up front when they fit in ``budget_bytes``; keeps the hot path
        free of serialisation at wave boundaries, when many requests start at once."""
        n = len(self.plan)
        if n == 0 or len(self.body(0)) * n > budget_bytes:
            return False
        self.prebuilt = [self.body(i) for i in range(n)]
        return True

    def prompt_len(self, i: int) -> int:
        if self.text_lens is not None:
            return self.text_lens[i]
        return int(self.plan.input_lens[i])

    def body(self, i: int) -> bytes:
        if self.prebuilt is not None:
            return self.prebuilt[i]
        out = int(self.plan.output_lens[i])
        if self.prompt_mode == "text":
            prompt = self.texts[i]
        elif self.prompt_mode == "pseudo" or self.chat:
            prompt = pseudo_text(self.plan, i)
        else:
            prompt = token_ids(self.plan, i)
        opts = {"include_usage": True}
        if self.continuous_usage:
            opts["continuous_usage_stats"] = True
        if self.chat:
            payload = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
                       "temperature": 0.0, "max_completion_tokens": out, "stream": True,
                       "stream_options": opts}
        else:
            payload = {"model": self.model, "prompt": prompt, "temperature": 0.0,
                       "max_tokens": out, "stream": True, "stream_options": opts}
        if self.ignore_eos:
            payload["ignore_eos"] = True
        payload.update(self.extra)
        return runtime.dumps(payload)


def auth_headers() -> dict[str, str]:
    key = os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}
