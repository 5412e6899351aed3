#!/usr/bin/env bash
# Try the Windows installer under Wine (Xvfb for the GUI), in a fresh Wine prefix:
#
#   packaging/windows/wine_smoke.sh [dist/windows/desktop-kb-setup.exe]
#
# silent install → `desktop-kb.exe demo` (both cited answers) → ingest a PDF, a DOCX and a scanned
# image (Chinese file names among them) → ask in English and in Chinese → the GUI window and its
# screenshots (docs/screenshots/windows-wine-*.png) → uninstall (the program folder goes, the data
# folder stays: a silent uninstall keeps it). Prints one result table (markdown) at the end; exit
# status 1 if a row failed.
#
# TEST-ONLY shims for Wine 8's gaps (packaging/windows/wine_shims: bcryptprimitives.dll, icuuc.dll,
# mscms.dll for a shown Qt window, and kernelwi.dll for qdrant-edge's write-ahead log, which the
# *installed test copy* of qdrant_edge.pyd is pointed at; wine_install.sh) go into the throwaway test
# prefix, never into the app or the installer. Not a substitute for a real Windows run.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
SETUP="$(realpath "${1:-dist/windows/desktop-kb-setup.exe}")"
CACHE="${DESKTOP_KB_WIN_CACHE:-$HOME/.cache/desktop-kb/windows}"
WORK="$CACHE/smoke"
LPY="$ROOT/.venv/bin/python"
rm -rf "$WORK" && mkdir -p "$WORK/docs"
results=()
row() { results+=("| $1 | $2 | $3 |"); echo "[smoke] $1: $2 — $3"; }
secs() { echo $(( $(date +%s) - $1 )); }
# shellcheck source=wine_install.sh
. "$ROOT/packaging/windows/wine_install.sh"

if wine_fresh_install "$SETUP"; then
  row "silent install (/S)" PASS "$INSTALL_S s; $(du -sh "$APPDIR_U" | cut -f1) in %LOCALAPPDATA%\\Programs\\desktop-kb; Start-menu entry"
else
  row "silent install (/S)" FAIL "no program or shortcut in $APPDIR_U"
fi
EXE="$APPDIR_U/desktop-kb.exe"
# stderr through a pipe: Wine 8 gives a Windows program an invalid handle for a regular file
kb() { wine "$EXE" "$@" < /dev/null 2> >(cat >> "$WORK/stderr.log"); }

t=$(date +%s)
out="$(kb demo)"; echo "$out" > "$WORK/demo.txt"
if [ "$(grep -c '^A: .*\[1\]' <<<"$out")" -ge 2 ] && ! grep -q '\[refused\]' <<<"$out"; then
  row "desktop-kb.exe demo" PASS "$(secs "$t") s; both answers cited: $(grep -o 'within 30 days' <<<"$out" | head -1), $(grep -o '500元' <<<"$out" | head -1)"
else
  row "desktop-kb.exe demo" FAIL "$(tail -c 400 <<<"$out" | tr '\n' ' ')"
fi

"$LPY" - "$WORK/docs" <<'EOF'
import sys
from pathlib import Path
sys.path.insert(0, "tests")
from filemakers import make_docx, make_pdf, make_scan
d = Path(sys.argv[1])
(d / "travel-rules.pdf").write_bytes(make_pdf([["Travel rules", "Taxi receipts must be filed within 14 days."]]))
make_docx(d / "报销制度.docx", [("Heading1", "报销制度"), ("", "出差住宿标准为每晚600元。")])
make_scan(["Spare keys", "The spare keys are kept in room B12."]).save(d / "scan-keys.png")
EOF
t=$(date +%s)
out="$(kb ingest "$(winepath -w "$WORK/docs")" --kb smoke --json)"; echo "$out" > "$WORK/ingest.json"
if "$LPY" -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(not (len(r["added"])==3 and not r["failed"] and r["ocr"]))' "$out" 2>/dev/null; then
  row "ingest PDF + DOCX (Chinese name) + scanned PNG" PASS "$(secs "$t") s; 3 added, the scan read by OCR"
else
  row "ingest PDF + DOCX (Chinese name) + scanned PNG" FAIL "$(tail -c 400 <<<"$out" | tr '\n' ' ') $(tail -c 300 "$WORK/stderr.log" | tr '\n' ' ')"
fi
ask() {  # question, expected words, file
  local t out; t=$(date +%s)
  out="$(kb ask "$1" --kb smoke)"; echo "$out" >> "$WORK/ask.txt"
  if grep -q "$2" <<<"$out" && grep -q '\[1\]' <<<"$out" && grep -q "$3" <<<"$out" && ! grep -q '\[refused\]' <<<"$out"; then
    row "ask: $1" PASS "$(secs "$t") s; \"$2\" cited to $3"
  else
    row "ask: $1" FAIL "$(tail -c 300 <<<"$out" | tr '\n' ' ')"
  fi
}
ask "How long do I have to file taxi receipts?" "14 days" "travel-rules.pdf"
ask "出差住宿标准是每晚多少钱？" "600" "报销制度.docx"
ask "Where are the spare keys kept?" "B12" "scan-keys.png"

t=$(date +%s)
GUI="$APPDIR_U/desktop-kb-gui.exe"
shots="$WORK/shots"
out="$(xvfb-run -a -s "-screen 0 1400x900x24" wine "$GUI" --data-dir "$(winepath -w "$WORK/gui-data")" \
      --screenshot "$(winepath -w "$shots")" --fake-models < /dev/null 2>&1)"
if [ -f "$shots/main-en.png" ] && [ -f "$shots/main-zh.png" ]; then
  mkdir -p "$ROOT/docs/screenshots"
  cp "$shots/main-en.png" "$ROOT/docs/screenshots/windows-wine-main-en.png"
  cp "$shots/main-zh.png" "$ROOT/docs/screenshots/windows-wine-main-zh.png"
  row "GUI under Xvfb (screenshot scenario)" PASS "$(secs "$t") s; docs/screenshots/windows-wine-main-{en,zh}.png"
else
  row "GUI under Xvfb (screenshot scenario)" FAIL "$(tail -c 400 <<<"$out" | tr '\n' ' ')"
fi

t=$(date +%s)
wine "$APPDIR_U/Uninstall.exe" /S < /dev/null
# the uninstaller goes on from a copy of itself in %TEMP%: wait for it (2 GB to delete)
for _ in $(seq 1 180); do [ -e "$APPDIR_U" ] || break; sleep 1; done
wineserver -w
left="$(find "$APPDIR_U" 2>/dev/null | head -3)"
if [ -z "$left" ] && [ -d "$DATA_U" ] \
   && ! wine reg query 'HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\desktop-kb' < /dev/null 2>/dev/null | grep -q desktop-kb \
   && ! ls "$WINEPREFIX"/drive_c/users/*/AppData/Roaming/Microsoft/Windows/Start\ Menu/Programs/desktop-kb*.lnk >/dev/null 2>&1; then
  row "silent uninstall" PASS "$(secs "$t") s; program folder, shortcuts and the Apps entry gone, data folder kept"
else
  row "silent uninstall" FAIL "left: ${left:-none}; data folder present: $([ -d "$DATA_U" ] && echo yes || echo no)"
fi

printf '\n| step | result | detail |\n|---|---|---|\n'
printf '%s\n' "${results[@]}"
printf '\nWine %s; %s\n' "$(wine --version)" "$(date -u +%Y-%m-%d)"
! printf '%s\n' "${results[@]}" | grep -q "| FAIL |"
