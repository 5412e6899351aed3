#!/usr/bin/env bash
# Measure a training run as the app runs it, and ship it with its numbers (the README's recipe):
#
#   training/measure.sh training/runs/ceN [HELDOUT_LIMIT]     # default: every held-out pair
#
# export (int8, into desktop_kb/resources/models/e5-cross-encoder) → `models install` → the int8
# ONNX model on the held-out split (calibration) and on the faithfulness report halves
# (training.evaluate) → export again with the calibration and these numbers in the manifest →
# install → the whole check with it (`desktop-kb eval claims … --verifier`) on both report halves.
# Writes RUN/eval-onnx.json, RUN/calibration.json, RUN/metrics.json, RUN/claims-<set>.json; prints
# one JSON line (the AUCs). Held-out scoring of all ~9,000 pairs took 21 min on 2 cores.
# The report halves come from $FAITH (default /tmp/faith/f40; built here when missing, from
# ../shared/eval, with benchmarks/faithfulness_set.py). To undo the shipping: git checkout the
# weights and run `desktop-kb models install` again.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN="${1:?run folder}"
LIMIT="${2:-0}"
PY=.venv/bin/python
KB=.venv/bin/desktop-kb
FAITH="${FAITH:-/tmp/faith/f40}"
export PYTHONUNBUFFERED=1
models="$($PY -c 'from desktop_kb.settings import load_settings; print(load_settings().models_dir)')"
$PY -m training.export --run "$RUN" >&2
$KB models install >&2
$PY -m training.evaluate --onnx "$models/e5-cross-encoder" --limit "$LIMIT" \
    --calibration-out "$RUN/calibration.json" --json > "$RUN/eval-onnx.json"
$PY - "$RUN" <<'PY'
import json, sys
from pathlib import Path
run = Path(sys.argv[1])
res = json.loads((run / "eval-onnx.json").read_text())
held = {k: v for k, v in res["heldout"].items() if k != "calibration"}
halves = {lang: {k: v for k, v in part.items() if k != "logits"} for lang, part in res["report"].items()}
(run / "metrics.json").write_text(json.dumps({"heldout": held, "report_halves": halves}, indent=2))
PY
$PY -m training.export --run "$RUN" --calibration "$RUN/calibration.json" --metrics "$RUN/metrics.json" >&2
$KB models install >&2
if [ ! -f "$FAITH/squad2_dev-report.jsonl" ]; then
  $PY benchmarks/faithfulness_set.py --write "$FAITH" --per-kind 40 >&2
fi
for set in squad2_dev cmrc2018_dev; do
  $KB eval claims "$FAITH/$set-report.jsonl" --verifier --json > "$RUN/claims-$set.json"
done
$PY - "$RUN" <<'PY'
import json, sys
from pathlib import Path
run = Path(sys.argv[1])
m = json.loads((run / "metrics.json").read_text())
print(json.dumps({"run": str(run), "report_auc_right_vs_bound": {k: v["auc_right_vs_bound"] for k, v in
                  m["report_halves"].items()}, "heldout_auc": {k: v["auc"] for k, v in m["heldout"].items()}}))
PY
