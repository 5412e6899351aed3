"""``desktop-kb doctor`` (and the app's Help → Check this computer): what this computer is and
how fast answers will be here, in under a minute on 2 cores.

It says the CPU and its instruction sets, the llama.cpp CPU build chosen for them, the answer
model's prefill and decode speed on a fixed ~800-token prompt, the embedder's passages a second,
memory, free space in the data and models folders, every model's state, and the local API's; then
one verdict: "answers here take about N s". What a bug report pastes, and the first step of the
real-Windows checklist (packaging/README.md).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..progress import CancelToken
from ..settings import Settings
from .model_status import model_status, state
from .system_facts import disk_free, system_facts

__all__ = ["DoctorReport", "answer_seconds", "run_doctor", "text_report"]

# a typical pointed answer on 2 cores (docs/benchmarks.md): ~1,300 prompt tokens read, ~80 written,
# and the span judge reading ~700 more
TYPICAL_PREFILL, TYPICAL_DECODE = 2000, 80
_PARAGRAPH = ("Travel expenses are reimbursed when the receipts are uploaded within 30 days of the end of the "
              "trip. Hotels may cost at most 120 euros a night, 180 euros in capital cities; meals are paid at "
              "60 euros a day. 员工出差期间的住宿费用每晚不超过五百元，一线城市不超过六百元。 ")


@dataclass(frozen=True)
class DoctorReport:
    system: dict[str, Any]
    llm: dict[str, Any]
    embedder: dict[str, Any]
    folders: dict[str, Any]
    models: list[dict[str, Any]] = field(default_factory=list)
    api: dict[str, Any] = field(default_factory=dict)
    verdict: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """The report as lines a person reads (and pastes into a bug report)."""
        return text_report(self.to_json())


def answer_seconds(prefill_tps: float, decode_tps: float) -> float:
    """About how long a typical answer takes at these speeds."""
    return TYPICAL_PREFILL / prefill_tps + TYPICAL_DECODE / decode_tps


def _llm_speed(settings: Settings, tokens: int = 800, decode: int = 32) -> dict[str, Any]:
    from ..backends.llama_cpu import load_cpu_backend
    from ..models.registry import resolve_llm_path

    path = resolve_llm_path(settings)
    if not path.is_file():
        return {"model": path.name, "error": "not installed"}
    try:
        from llama_cpp import Llama

        cpu = load_cpu_backend()
        threads = settings.models.threads
        llm = Llama(model_path=str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False)
    except Exception as exc:  # the doctor reports; it never fails on what it examines
        return {"model": path.name, "error": f"{type(exc).__name__}: {exc}"}
    try:
        prompt = llm.tokenize((_PARAGRAPH * 12).encode("utf-8"))[:tokens]
        t0 = time.perf_counter()
        llm.eval(prompt)
        prefill = time.perf_counter() - t0
        t0 = time.perf_counter()
        for tok in prompt[:decode]:  # one token at a time after the prompt, as writing does
            llm.eval([tok])
        written = time.perf_counter() - t0
    finally:
        llm.close()
    return {"model": path.name, "cpu_backend": cpu, "threads": threads, "prompt_tokens": len(prompt),
            "prefill_tokens_per_s": round(len(prompt) / prefill, 1),
            "decode_tokens_per_s": round(min(decode, len(prompt)) / written, 1)}


def _embedder_speed(settings: Settings, n: int = 32) -> dict[str, Any]:
    from .factory import build_embedder

    try:
        embedder = build_embedder(settings)
        texts = [(_PARAGRAPH * 4)[i:] for i in range(n)]  # ~800 characters each, as chunks are
        embedder.embed_passages(texts[:2])  # the first call loads the runtime
        t0 = time.perf_counter()
        embedder.embed_passages(texts)
        return {"model": embedder.id, "chunks_per_s": round(n / (time.perf_counter() - t0), 1)}
    except Exception as exc:
        return {"model": settings.models.embedder.id, "error": f"{type(exc).__name__}: {exc}"}


def _api(settings: Settings) -> dict[str, Any]:
    port = settings.api.port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.3)
        listening = s.connect_ex(("127.0.0.1", port)) == 0
    return {"enabled": settings.api.enabled, "port": port, "listening": listening}


def _verdict(llm: dict[str, Any]) -> str:
    if "prefill_tokens_per_s" not in llm:
        return f"The answer model cannot run here ({llm.get('error', 'unknown')}): answers are not possible yet."
    seconds = answer_seconds(llm["prefill_tokens_per_s"], llm["decode_tokens_per_s"])
    return (f"Answers here take about {seconds:.0f} s (the model reads {llm['prefill_tokens_per_s']:.0f} "
            f"tokens/s and writes {llm['decode_tokens_per_s']:.0f} tokens/s with {llm['threads']} threads).")


def run_doctor(settings: Settings, *, speed: bool = True, progress: Callable[[str], None] | None = None,
               cancel: CancelToken | None = None) -> DoctorReport:
    """Examine this computer; ``speed=False`` skips the model timings (seconds instead of a minute)."""
    say = progress or (lambda _s: None)
    started = time.perf_counter()
    say("system")
    system = system_facts()
    folders = {"data": str(settings.data_dir), "data_free_gib": _round(disk_free(settings.data_dir)),
               "models": str(settings.models_dir), "models_free_gib": _round(disk_free(Path(settings.models_dir)))}
    say("models")
    models = [asdict(s) | {"state": state(s)} for s in model_status(settings)]
    if cancel is not None:
        cancel.raise_if_cancelled()
    llm: dict[str, Any] = {}
    embedder: dict[str, Any] = {}
    if speed:
        say("answer model")
        llm = _llm_speed(settings)
        if cancel is not None:
            cancel.raise_if_cancelled()
        say("embedder")
        embedder = _embedder_speed(settings)
    verdict = _verdict(llm) if speed else "Speeds not measured (--no-speed)."
    return DoctorReport(system, llm, embedder, folders, models, _api(settings), verdict,
                        round(time.perf_counter() - started, 1))


def _round(v: float | None) -> float | None:
    return round(v, 1) if v is not None else None


def text_report(r: dict[str, Any]) -> str:
    """The report as lines a person reads (and pastes into a bug report)."""
    s, llm, emb, f, api = r["system"], r["llm"], r["embedder"], r["folders"], r["api"]
    lines = [r["verdict"], "",
             f"CPU          {s['cpu']} · {s['cores']} cores · {' '.join(s['instruction_sets']) or '(llama.cpp absent)'}",
             f"llama.cpp    CPU build {s['llama_cpu_backend']}",
             f"System       {s['os']} · Python {s['python']}{' · frozen build' if s['frozen'] else ''}",
             f"Memory       {s['ram_gib']} GiB, {s['ram_available_gib']} GiB free"]
    if llm:
        lines.append(f"Answer model {llm['model']}: " + (
            f"llama.cpp CPU build {llm['cpu_backend']}, {llm['threads']} threads, prefill "
            f"{llm['prefill_tokens_per_s']} tokens/s, decode {llm['decode_tokens_per_s']} tokens/s"
            if "error" not in llm else f"cannot run: {llm['error']}"))
    if emb:
        lines.append(f"Embedder     {emb['model']}: " + (f"{emb['chunks_per_s']} passages/s" if "error" not in emb
                                                         else f"cannot run: {emb['error']}"))
    lines += [f"Data folder  {f['data']} ({f['data_free_gib']} GiB free)",
              f"Models       {f['models']} ({f['models_free_gib']} GiB free)"]
    lines += [f"  {m['role']:10} {m['state']:8} {m['id']}" for m in r["models"]]
    lines.append(f"Local API    {'on' if api['enabled'] else 'off'} (port {api['port']}"
                 f"{', answering' if api['listening'] else ''})")
    lines.append(f"Checked in {r['seconds']} s.")
    return "\n".join(lines)
