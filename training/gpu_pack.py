"""What a training run reads, packed small enough to carry to a lent GPU machine, and unpacked there.

The device tool carries at most 64 MiB of ignored files, and the GPU machine has no ``../shared``:
the built training examples (~72 MB of JSONL for the train split) do not fit as they are, and
without the span files beside them the run would look for another cache and try to build it.
``pack`` writes ``training/.cache/gpu/``: the train split's examples gzipped (~31 MB) and the span
files their cache name depends on; ``unpack`` (in training/gpu_run.sh, on the machine) puts them
back where :func:`training.data.build` finds them, and says so if the checkout there would look
for another cache.

    python -m training.gpu_pack pack      # here, before run(..., carry=["training/.cache/gpu"])
    python -m training.gpu_pack unpack    # there (gpu_run.sh does it)
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
from pathlib import Path

from training import data

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "training" / ".cache"
PACK = CACHE / "gpu"
LIMIT = 60 * 2**20  # below the device tool's 64 MiB of carried files
SPLITS = ("train",)


def _span_files() -> list[Path]:
    return [p for p in (data.WIKIQA_SPANS, data.ALIGNED_SPANS) if p.is_file()]


def pack(dest: Path = PACK, cache: Path = CACHE, splits: tuple[str, ...] = SPLITS) -> list[Path]:
    """Write the pack (building a split's examples first where they are not cached); the files written."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    out = [Path(shutil.copy2(p, dest / p.name)) for p in _span_files()]
    for split in splits:
        src = data.cache_file(cache, split)
        if not src.is_file():
            data.build(split, cache=cache)
        target = dest / (src.name + ".gz")
        with src.open("rb") as fh, gzip.open(target, "wb", compresslevel=6) as gz:
            shutil.copyfileobj(fh, gz)
        out.append(target)
    size = sum(p.stat().st_size for p in out)
    if size > LIMIT:
        raise SystemExit(f"the pack is {size / 2**20:.0f} MiB, over the {LIMIT // 2**20} MiB the device tool carries")
    return out


def unpack(src: Path = PACK, cache: Path = CACHE, splits: tuple[str, ...] = SPLITS) -> list[Path]:
    """Put the pack back where :func:`training.data.build` reads it; SystemExit when this checkout
    would look for another cache (another data version, another span file)."""
    if not src.is_dir():
        raise SystemExit(f"no pack in {src}: run `python -m training.gpu_pack pack` and carry training/.cache/gpu")
    cache.mkdir(parents=True, exist_ok=True)
    for target in (data.WIKIQA_SPANS, data.ALIGNED_SPANS):
        if (src / target.name).is_file():
            shutil.copy2(src / target.name, target)
    for gz in sorted(src.glob("*.jsonl.gz")):
        with gzip.open(gz, "rb") as fh, (cache / gz.name[:-3]).open("wb") as out:
            shutil.copyfileobj(fh, out)
    wanted = [data.cache_file(cache, split) for split in splits]
    missing = [p.name for p in wanted if not p.is_file()]
    if missing:
        raise SystemExit(f"the pack does not hold {', '.join(missing)} (another data version or span file "
                         "than where it was packed): pack it again from this commit")
    return wanted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("pack", "unpack"))
    args = ap.parse_args(argv)
    done = pack() if args.what == "pack" else unpack()
    for p in done:
        print(f"{p} ({p.stat().st_size / 2**20:.1f} MiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
