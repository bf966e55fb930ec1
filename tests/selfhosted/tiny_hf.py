"""A tiny randomly initialised causal LM and its tokenizer, built on disk for the SelfHosted tests.

No weights are downloaded: `build_snapshot` trains a byte-level BPE tokenizer (tokenizers) on a few lines,
gives it a ChatML chat template, makes a 2-layer Llama with transformers and saves both as a HuggingFace
snapshot folder of a few MB. `ForcedTokens` is a test-only logits processor that makes generation write a
chosen text (a tool call, say), since a random model writes nothing useful by itself: the tokens still go
through `generate`, the streamer, the decoder and sagent's parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WINDOW = 2048
EXTRA_TOKENS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]

# ChatML like Qwen's: tools as JSON schemas in the system turn, calls as <tool_call> blocks, results as
# <tool_response>, and `enable_thinking` (off: an empty think block is written into the prompt).
TOOLS_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n{{ messages[0].content if messages[0].role == 'system' else '' }}"
    "\n\n# Tools\n<tools>{% for tool in tools %}{{ '\n' }}{{ tool | tojson }}{% endfor %}{{ '\n' }}</tools>\n"
    'Call a tool with <tool_call>\n{"name": NAME, "arguments": ARGS}\n</tool_call><|im_end|>\n'
    "{% elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>{{ '\n' }}"
    "{% endif %}"
    "{% for m in messages %}"
    "{% if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>{{ '\n' }}"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content }}"
    "{% for c in m.tool_calls or [] %}{{ '\n' }}<tool_call>\n"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call>'
    "{% endfor %}<|im_end|>{{ '\n' }}"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>"
    "{{ '\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant{{ '\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>{{ '\n\n' }}</think>{{ '\n\n' }}"
    "{% endif %}{% endif %}"
)

# ChatML with no tools and no thinking: SelfHosted falls back to sagent's text tool protocol.
PLAIN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}{{ '\n' }}{{ m.content }}<|im_end|>{{ '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant{{ '\n' }}{% endif %}"
)

CORPUS = [
    "Hello from a tiny model. The file a.txt says hello.",
    '<tool_call>\n{"name": "Read", "arguments": {"path": "a.txt"}}\n</tool_call>',
    "def add(a, b):\n    return a + b\n",
    "<think>Reading the file first.</think> It says aaa.",
] * 20


def build_snapshot(folder: Path, template: str = TOOLS_TEMPLATE, window: int = WINDOW) -> Path:
    """Write a tokenizer (with `template`) and a random 2-layer Llama into `folder`; returns it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(CORPUS, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.add_tokens(EXTRA_TOKENS)  # plain added tokens: decoded into the text, as Qwen's are
    tokenizer.chat_template = template
    tokenizer.save_pretrained(folder)

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=window,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def read_config(folder: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((folder / "config.json").read_text())
    return config


class ForcedTokens:
    """A logits processor that makes `generate` produce `text` (then the end token), token by token."""

    def __init__(self, tokenizer: Any, text: str) -> None:
        self.ids = [*tokenizer.encode(text, add_special_tokens=False), tokenizer.eos_token_id]
        self.start: int | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self.start is None:
            self.start = input_ids.shape[-1]
        step = input_ids.shape[-1] - self.start
        wanted = self.ids[min(step, len(self.ids) - 1)]
        forced = torch.full_like(scores, float("-inf"))
        forced[:, wanted] = 0.0
        return forced


def forcing(tokenizer: Any, *texts: str) -> Any:
    """A `generation` option list for `SelfHostedModel` that forces `texts`, one per request in turn."""
    from transformers import LogitsProcessorList

    class Turns:
        def __init__(self) -> None:
            self.left = [ForcedTokens(tokenizer, t) for t in texts]
            self.current: ForcedTokens | None = None
            self.length = -1

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            length = input_ids.shape[-1]
            if self.current is None or length != self.length + 1:  # one token a step: a jump is a new request
                self.current = self.left.pop(0)
            self.length = length
            return self.current(input_ids, scores)

    return LogitsProcessorList([Turns()])
