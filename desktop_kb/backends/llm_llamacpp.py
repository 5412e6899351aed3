"""Chat generation with a local GGUF model through llama-cpp-python (streaming, cancellable).

The chat is rendered with the model's GGUF template and tokenised here (:mod:`.llama_prompt`), so
each prompt's token count is known and every system prompt's state is cached: a question
prefills only its own part.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Cancelled, GenerationError, ModelError, ModelNotInstalled
from ..progress import CancelToken
from ..protocols import ChatMessage, SpanReading
from ._common import missing_package
from .llama_cpu import load_cpu_backend
from .llama_prompt import ChatTemplate, PrefixCache, log_odds

__all__ = ["GGUF_MAGIC", "LlamaCppGenerator"]


def _logsumexp(row: Any) -> float:
    """log Σ exp(row) of one row of logits (what turns a logit into a log-probability), in a
    tenth of a millisecond over a 150k-token vocabulary (np.logaddexp.reduce takes ~5 ms)."""
    top = float(row.max())
    return top + float(np.log(np.exp(row - top).sum(dtype=np.float64)))


GGUF_MAGIC = b"GGUF"


class LlamaCppGenerator:
    """One GGUF model, loaded lazily on first use; one generation at a time per instance.

    The chat template comes from the GGUF metadata (Qwen2.5: ChatML, stops at ``<|im_end|>``).
    """

    def __init__(self, path: str | Path, model_id: str, n_ctx: int = 4096, n_threads: int = 2) -> None:
        self.path = Path(path)
        self.id = model_id
        self.n_ctx = int(n_ctx)
        self.n_threads = max(1, int(n_threads))
        self._llm: Any = None
        self._template: ChatTemplate | None = None
        self.prefix_cache = PrefixCache()
        self._yes_no: tuple[list[int], list[int]] | None = None
        self.cpu = ""  # the llama.cpp CPU backend it runs on, once loaded (backends/llama_cpu.py)
        self._lock = threading.Lock()  # guards loading and generation (a llama context is not reentrant)

    # -- loading -----------------------------------------------------------------------------
    def _check_file(self) -> None:
        if not self.path.is_file():
            raise ModelNotInstalled(
                f"LLM model file not found: {self.path}",
                "Run `desktop-kb models install` to assemble the shipped model, or "
                "`desktop-kb models install --from FILE.gguf` to use a GGUF file you copied.",
            )
        with self.path.open("rb") as fh:
            if fh.read(4) != GGUF_MAGIC:
                raise ModelError(
                    f"{self.path} is not a GGUF model file.",
                    "Re-run `desktop-kb models install` (the file may be incomplete or damaged).",
                )

    def _load_locked(self) -> Any:
        if self._llm is not None:
            return self._llm
        self._check_file()
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise missing_package("llama-cpp-python", "desktop-kb[llm]", "The answer generator") from exc
        self.cpu = load_cpu_backend()
        try:
            self._llm = Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"Cannot load the LLM {self.path.name}: {exc}",
                "The file may be damaged, or there is not enough memory; try a smaller model.",
            ) from exc
        self._template = ChatTemplate.of(self._llm)
        self._yes_no = None
        self.prefix_cache.clear()
        return self._llm

    def _ready_locked(self, cancel: CancelToken | None) -> tuple[Any, ChatTemplate | None]:
        """The loaded model and its chat template (None: it has none), unless cancelled; call
        with the lock held."""
        if cancel is not None and cancel.cancelled:
            raise Cancelled()
        return self._load_locked(), self._template

    def load(self) -> None:
        """Load the model now (it is otherwise loaded on the first :meth:`chat`)."""
        with self._lock:
            self._load_locked()

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def close(self) -> None:
        """Free the model's memory; a later :meth:`chat` loads it again."""
        with self._lock:
            llm, self._llm = self._llm, None
            self._template = None
            self._yes_no = None
            self.prefix_cache.clear()
            if llm is not None and hasattr(llm, "close"):
                llm.close()

    # -- Generator ---------------------------------------------------------------------------
    def count_tokens(self, messages: Sequence[ChatMessage]) -> int | None:
        """The prompt's length in the model's tokens (``None`` for a model without a chat template)."""
        with self._lock:
            self._load_locked()
            template = self._template
            return len(template.prompt(_plain(messages))) if template is not None else None

    def yes_no(self, messages: Sequence[ChatMessage], *, cancel: CancelToken | None = None) -> float | None:
        """log P(yes) − log P(no) for the reply's first token (one prefill, nothing sampled)."""
        with self._lock:
            llm, template = self._ready_locked(cancel)
            if template is None:
                return None
            logits = self._first_logits(llm, template, messages)
            yes, no = self._yes_no_ids(llm)
            return log_odds(logits, yes, no)

    def _first_logits(self, llm: Any, template: ChatTemplate, messages: Sequence[ChatMessage]) -> Any:
        """The prompt evaluated (what the context already holds of it kept; at least one token
        evaluated so the logits are this prompt's) and the logits of the reply's first token."""
        prompt = self._prepared(llm, template, _plain(messages))
        held = llm.longest_token_prefix(llm.input_ids[:llm.n_tokens], prompt)
        llm.n_tokens = min(held, len(prompt) - 1)
        try:
            llm.eval(prompt[llm.n_tokens:])
            return self._logits(llm)
        except (ValueError, RuntimeError) as exc:
            raise GenerationError(f"The LLM failed while checking the answer: {exc}") from exc

    def answer_span(self, messages: Sequence[ChatMessage], *, refusal: Sequence[str] = ("none",),
                    candidate: str = "", candidate_if: Callable[[float, str], bool] | None = None,
                    max_tokens: int = 24, cancel: CancelToken | None = None) -> SpanReading | None:
        """One prefill and a few greedy tokens: log P(a reply that is not ``refusal``) − log
        P(``refusal``) for the reply's first token, the reply's first line (at most
        ``max_tokens``), and how likely the reply ``candidate`` was (its tokens teacher-forced in
        one batch from where they leave the greedy reply; only if ``candidate_if(score, reply)``
        says so, when given). ``None`` for a model without a chat template."""
        with self._lock:
            llm, template = self._ready_locked(cancel)
            if template is None:
                return None
            refuse = self._first_ids(llm, [v for w in refusal for v in (w, " " + w, w.capitalize(), w.upper())])
            stop = set(self._first_ids(llm, [template.eos], special=True)) if template.eos else set()
            stop.add(llm.token_eos())
            forced = llm.tokenize(candidate.encode(), add_bos=False, special=False)[:max_tokens] if candidate else []
            out: list[int] = []
            row = np.array(self._first_logits(llm, template, messages), dtype=np.float32)
            start = llm.n_tokens  # where the reply begins
            try:
                lse = _logsumexp(row)
                no = float(np.logaddexp.reduce(row[refuse].astype(np.float64))) - lse  # log P(refusal)
                score = float(np.log(-np.expm1(min(no, -1e-9)))) - no
                span_logp, forced_logp, shared = 0.0, 0.0, 0
                for _ in range(max_tokens):
                    if cancel is not None and cancel.cancelled:
                        raise Cancelled()
                    tok = int(np.argmax(row))
                    if shared == len(out) < len(forced):
                        forced_logp += float(row[forced[shared]]) - lse  # the candidate's next token, here
                        shared += int(forced[shared] == tok)
                    if tok in stop or b"\n" in llm.detokenize([tok]):
                        break
                    out.append(tok)
                    span_logp += float(row[tok]) - lse
                    llm.eval([tok])
                    row = np.array(self._logits(llm), dtype=np.float32)
                    lse = _logsumexp(row)
                reply = llm.detokenize(out).decode("utf-8", "ignore").strip()
                candidate_logp = None
                if forced and (candidate_if is None or candidate_if(score, reply)):
                    candidate_logp = forced_logp + self._forced_logp(llm, start + shared, forced[shared:])
            except (ValueError, RuntimeError) as exc:
                raise GenerationError(f"The LLM failed while checking the answer: {exc}") from exc
            return SpanReading(score, reply, round(no, 4), round(span_logp, 4), candidate_logp,
                               len(forced) if candidate_logp is not None else 0)

    def _forced_logp(self, llm: Any, at: int, tokens: Sequence[int]) -> float:
        """log P of ``tokens[1:]`` after ``tokens[0]`` … placed at position ``at`` (the first
        token's own probability is the caller's): one batch, the logits of every position."""
        if len(tokens) < 2:
            return 0.0
        feed = list(tokens[:-1])
        llm.n_tokens = at
        llm._ctx.kv_cache_seq_rm(-1, at, -1)
        llm._batch.set_batch(batch=feed, n_past=at, logits_all=True)
        llm._ctx.decode(llm._batch)
        llm.input_ids[at:at + len(feed)] = feed
        llm.n_tokens = at + len(feed)
        total = 0.0
        for i, nxt in enumerate(tokens[1:]):
            row = np.ctypeslib.as_array(llm._ctx.get_logits_ith(i), shape=(llm.n_vocab(),))
            total += float(row[nxt]) - _logsumexp(row)
        return total

    @staticmethod
    def _logits(llm: Any) -> Any:
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))

    @staticmethod
    def _first_ids(llm: Any, words: Sequence[str], special: bool = False) -> list[int]:
        return sorted({llm.tokenize(w.encode(), add_bos=False, special=special)[0] for w in words if w})

    def warm(self, systems: Sequence[str], *, cancel: CancelToken | None = None) -> int:
        """Load the model and keep each system prompt's state in the prefix cache, so the first
        question prefills only its own part (as every later one does)."""
        done = 0
        for system in systems:
            with self._lock:
                llm, template = self._ready_locked(cancel)
                if template is None:
                    return done
                messages = [{"role": "system", "content": system}, {"role": "user", "content": "?"}]
                prefix = template.system_prefix(messages, template.prompt(messages))
                if prefix is None:
                    continue
                try:
                    if self.prefix_cache.prepare(llm, prefix) == 0:
                        done += len(prefix)
                except RuntimeError as exc:  # llama.cpp failed to evaluate: the first question will say so
                    raise GenerationError(f"The LLM failed while loading: {exc}") from exc
        return done

    def _yes_no_ids(self, llm: Any) -> tuple[list[int], list[int]]:
        if self._yes_no is None:
            self._yes_no = (self._first_ids(llm, ("Yes", " Yes", "yes", "YES")),
                            self._first_ids(llm, ("No", " No", "no", "NO")))
        return self._yes_no

    def _check_length(self, tokens: int) -> None:
        if tokens >= self.n_ctx:
            raise GenerationError(
                f"The prompt is too long for the LLM's context ({tokens} of {self.n_ctx} tokens).",
                "Lower query.top_k or query.evidence_tokens, or raise models.llm_context in the settings.",
            )

    def _prepared(self, llm: Any, template: ChatTemplate, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's tokens, with its system prompt's state in the context (prefix cache)."""
        prompt = template.prompt(messages)
        self._check_length(len(prompt))
        prefix = template.system_prefix(messages, prompt)
        if prefix is not None:
            try:
                self.prefix_cache.prepare(llm, prefix)
            except RuntimeError:  # a state that does not load: prefill the whole prompt instead
                self.prefix_cache.clear()
                llm.reset()
        return prompt

    def _stream(self, llm: Any, messages: list[dict[str, str]], kwargs: dict[str, Any],
                json_schema: dict[str, Any] | None) -> Any:
        """The token stream: through our template and prefix cache when the model has one."""
        template = self._template
        if template is None:
            # llama-cpp-python renders this chat itself; its messages' text alone is a lower bound
            text = "\n".join(m["content"] for m in messages).encode("utf-8", "replace")
            self._check_length(len(llm.tokenize(text, add_bos=False, special=False)))
            if json_schema is not None:
                # {"type": "json_schema", ...} is silently ignored by llama-cpp-python: use json_object.
                kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
            return llm.create_chat_completion(messages=messages, **kwargs), "delta"
        prompt = self._prepared(llm, template, messages)
        if json_schema is not None:
            from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

            try:
                kwargs["grammar"] = LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
            except Exception:  # a schema the converter does not handle: any JSON, checked afterwards
                kwargs["grammar"] = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        return llm.create_completion(prompt=prompt, stop=[template.eos] if template.eos else None,
                                     **kwargs), "text"

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> str:
        kwargs: dict[str, Any] = {"max_tokens": int(max_tokens), "temperature": float(temperature), "stream": True}
        pieces: list[str] = []
        with self._lock:
            llm, _ = self._ready_locked(cancel)
            try:
                stream, field = self._stream(llm, _plain(messages), kwargs, json_schema)
            except (ValueError, RuntimeError) as exc:
                raise GenerationError(f"The LLM could not start: {exc}") from exc
            finish = None
            try:
                for chunk in stream:
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    piece = (choice["delta"].get("content") if field == "delta" else choice.get("text")) or ""
                    if piece:
                        pieces.append(piece)
                        if on_token is not None:
                            on_token(piece)
                    if cancel is not None and cancel.cancelled:
                        raise Cancelled()
            except (ValueError, RuntimeError) as exc:  # the prompt's length was checked before
                raise GenerationError(f"The LLM failed while answering: {exc}") from exc
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()  # stops llama.cpp's token loop at once
        if json_schema is not None and finish == "length":
            raise GenerationError(
                f"The LLM's JSON reply was cut off at {max_tokens} tokens, so it is not valid JSON.",
                "Raise max_tokens, or bound strings/arrays in the schema (maxLength, maxItems).",
            )
        return "".join(pieces)


def _plain(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]
