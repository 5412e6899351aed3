"""Installing models: the shipped GGUF parts, a folder/file the user copied, or (explicitly) online.

``install_from_dir`` and ``install_online`` return updated :class:`Settings`; the caller saves them.
``install_shipped`` needs no settings change (an empty ``path`` resolves to the assembled files).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..backends._common import ensure_model_max_length, hub_online, missing_package
from ..errors import ConfigError, ModelError, ModelNotInstalled
from ..progress import CancelToken
from ..settings import MODEL_ROLES, ModelSpec, Settings
from .assemble import assemble_gguf, locate_parts, verify_gguf
from .detect import DetectedModel, detect_model
from .registry import (
    ONLINE_MODELS,
    SHIPPED_LLMS,
    ShippedGGUF,
    default_model_dir,
    resolve_llm_path,
    resolve_model_dir,
    slug,
)

__all__ = [
    "DetectedModel",
    "assemble_gguf",
    "check_online",
    "detect_model",
    "install_from_dir",
    "install_online",
    "install_shipped",
    "resolve_llm_path",
    "resolve_model_dir",
    "shipped_parts_installed",
    "slug",
    "with_spec",
]

ROLES = MODEL_ROLES

_NOT_NEEDED_FOR_ONNX = ("*.bin", "*.pt", "*.safetensors", "*.h5", "*.msgpack", "*.ot", ".git", "*.gguf")
_NOT_NEEDED_FOR_TORCH = ("*.onnx", "*.onnx_data", "onnx", ".git", "*.h5", "*.msgpack", "*.ot", "*.gguf")


def with_spec(settings: Settings, role: str, spec: ModelSpec) -> Settings:
    return settings.with_model(role, spec)


# -- the shipped LLMs ----------------------------------------------------------------------------
def shipped_parts_installed(model: ShippedGGUF) -> bool:
    return all(
        importlib.util.find_spec(f"{model.package_prefix}_part{i}") is not None
        for i in range(1, model.n_parts + 1)
    )


def install_shipped(
    settings: Settings,
    ids: tuple[str, ...] | None = None,
    *,
    cancel: CancelToken | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> list[Path]:
    """Assemble the shipped GGUF models whose part packages are installed (or exactly ``ids``).

    Returns the model files. Settings need no change: an empty ``path`` resolves to these files.
    """
    explicit = ids is not None
    wanted = ids if ids is not None else tuple(SHIPPED_LLMS)
    done: list[Path] = []
    for model_id in wanted:
        model = SHIPPED_LLMS.get(model_id)
        if model is None:
            raise ConfigError(f"{model_id!r} is not a shipped model; known: {', '.join(SHIPPED_LLMS)}.")
        if not explicit and not shipped_parts_installed(model):
            continue
        progress = None if on_progress is None else (lambda d, t, _id=model_id: on_progress(_id, d, t))
        done.append(
            assemble_gguf(
                model.package_prefix,
                model.n_parts,
                settings.models_dir / model.filename,
                expected_size=model.size,
                expected_sha256=model.sha256,
                cancel=cancel,
                on_progress=progress,
            )
        )
    if not done:
        configured = SHIPPED_LLMS.get(settings.models.llm.id)
        if configured is not None:
            locate_parts(configured.package_prefix, configured.n_parts)  # raises, naming the packages
        raise ModelNotInstalled(
            "No shipped model packages are installed.",
            "Install them with `pip install desktop-kb[models]`, or copy a GGUF file and run "
            "`desktop-kb models install --from FILE.gguf`.",
        )
    return done


# -- a folder or file the user copied --------------------------------------------------------------
def _same_file(a: Path, b: Path) -> bool:
    """The same file (a link, or equal contents)."""
    if os.path.samefile(a, b):
        return True
    if a.stat().st_size != b.stat().st_size:
        return False
    import filecmp

    return filecmp.cmp(a, b, shallow=False)


def _copy_file(src: Path, dest: Path) -> None:
    """Hard-link when possible (instant, no extra space), else copy via a temp file."""
    if dest.exists() and dest.resolve() == src.resolve():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()


def _copy_dir(src: Path, dest: Path, ignore: tuple[str, ...]) -> None:
    if dest.exists() and dest.resolve() == src.resolve():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=dest.name + ".", suffix=".tmp"))
    try:
        shutil.copytree(src, tmp / "m", ignore=shutil.ignore_patterns(*ignore))
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(dest, old)
        os.replace(tmp / "m", dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install_from_dir(src: Path, settings: Settings, role: str | None = None) -> Settings:
    """Copy (or hard-link) a model the user copied to this computer into the models folder and
    point the matching role at it. ``role`` may be given to put a GGUF in ``small_llm``.

    Switching the embedder makes existing knowledge bases need re-embedding (EmbedderMismatch).
    """
    found = detect_model(Path(src))
    target_role = role or found.role
    if (found.role == "llm") != (target_role in ("llm", "small_llm")) or (
        found.role != "llm" and target_role != found.role
    ):
        raise ConfigError(f"{src} looks like a {found.role} model, not a {target_role}.")
    if found.role == "llm":
        assert found.file is not None
        dest = settings.models_dir / found.file.name
        verify_gguf(found.file)  # the file given (by its own sidecar where it has one), before anything is copied
        if dest.exists() and not _same_file(dest, found.file):
            raise ConfigError(f"A different model named {dest.name} is installed already: {dest}.",
                              "Rename the new file, or remove the installed one first.")
        _copy_file(found.file, dest)
        verify_gguf(dest)
        return with_spec(settings, target_role, ModelSpec(found.id, "llama_cpp", str(dest)))
    dest = default_model_dir(settings, found.id)
    ignore = _NOT_NEEDED_FOR_ONNX if found.backend == "fastembed" else _NOT_NEEDED_FOR_TORCH
    _copy_dir(Path(src).expanduser(), dest, ignore)
    if found.backend == "fastembed":
        ensure_model_max_length(dest)
    return with_spec(settings, target_role, ModelSpec(found.id, found.backend, str(dest), found.dim))


# -- online (explicit, never automatic) ------------------------------------------------------------
def _hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _probe(url: str, timeout: float, result: list[BaseException | None]) -> None:
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "desktop-kb"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            pass
        result.append(None)
    except urllib.error.HTTPError:
        result.append(None)  # the server answered: the network works
    except (OSError, ValueError) as exc:  # URLError, timeouts, TLS and DNS failures
        result.append(exc)


def check_online(timeout: float = 3.0) -> None:
    """Raise ModelError within ~``timeout`` seconds when the model hub cannot be reached.

    A real HTTPS request (not just a TCP connect: sandboxes and proxies may accept any connection),
    run in a thread so that a slow DNS lookup cannot hang the caller either.
    """
    url = _hub_endpoint()
    result: list[BaseException | None] = []
    worker = threading.Thread(target=_probe, args=(url, timeout, result), daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    error: BaseException | None = result[0] if result else TimeoutError(f"no answer within {timeout:.0f} s")
    if error is not None:
        raise ModelError(
            f"No network: cannot reach {url} ({error}).",
            "Copy the model folder (or .gguf file) to this computer and use "
            "`desktop-kb models install --from DIR`.",
        ) from error


def install_online(role: str, settings: Settings, *, timeout: float = 3.0) -> Settings:
    """Download a model with huggingface_hub into the models folder (the only code that downloads).

    ``role``: embedder (BGE-M3, ONNX), reranker (bge-reranker-v2-m3, ONNX), llm (Qwen2.5-1.5B-Instruct
    GGUF) or llm-3b (Qwen2.5-3B-Instruct GGUF).
    """
    model = ONLINE_MODELS.get(role)
    if model is None:
        raise ConfigError(f"Nothing to download for {role!r}; choose one of {', '.join(ONLINE_MODELS)}.")
    check_online(timeout)
    try:
        from huggingface_hub import hf_hub_download, snapshot_download
    except ImportError as exc:
        raise missing_package("huggingface_hub", "huggingface_hub", "Downloading models") from exc
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    try:
        with hub_online():
            if model.filename:
                path = Path(
                    hf_hub_download(model.repo_id, model.filename, local_dir=str(settings.models_dir))
                )
            else:
                path = Path(
                    snapshot_download(
                        model.repo_id,
                        local_dir=str(default_model_dir(settings, model.id)),
                        allow_patterns=list(model.allow_patterns),
                    )
                )
    except Exception as exc:  # the hub client raises many types (HTTP, SSL, OS); report them all
        raise ModelError(
            f"Downloading {model.repo_id} failed: {exc}",
            "Check the connection and retry, or copy the model and use `desktop-kb models install --from DIR`.",
        ) from exc
    if model.filename:
        verify_gguf(path)
    elif model.backend == "fastembed":
        ensure_model_max_length(path)
    return with_spec(settings, model.role, ModelSpec(model.id, model.backend, str(path), model.dim))

