#!/usr/bin/env bash
# Start-up time and size of the *installed* Windows app under Wine (TEST-ONLY, like wine_smoke.sh):
#
#   packaging/windows/wine_startup.sh [dist/windows/desktop-kb-setup.exe] [--runs N]
#
# A fresh Wine prefix with the test shims (wine_install.sh), the installer run silently, Wine's
# server started and kept (so Wine's own start is not counted), then packaging/measure_startup.py
# --wine on the installed folder: GUI window up, ingest of the sample folder and time to the first
# cited answer, from a cold and then a warm page cache; offline (unshare -n), on Xvfb.
# Writes $DESKTOP_KB_WIN_CACHE/startup/startup.json and prints it. Wine is not Windows: the numbers
# say what the app costs under Wine on this machine, not on a laptop running Windows.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
SETUP="$(realpath "${1:-dist/windows/desktop-kb-setup.exe}")"
shift $(( $# > 0 ? 1 : 0 ))
CACHE="${DESKTOP_KB_WIN_CACHE:-$HOME/.cache/desktop-kb/windows}"
WORK="$CACHE/startup"
LPY="$ROOT/.venv/bin/python"
rm -rf "$WORK" && mkdir -p "$WORK"
# shellcheck source=wine_install.sh
. "$ROOT/packaging/windows/wine_install.sh"
wine_fresh_install "$SETUP" || { echo "install failed: no program in $APPDIR_U" >&2; exit 1; }
echo "[startup] installed in $INSTALL_S s: $APPDIR_U" >&2
wineserver -p
wine cmd /c exit < /dev/null >/dev/null 2>&1   # Wine's own services up before the first timing
xvfb-run -a -s "-screen 0 1400x900x24" "$LPY" "$ROOT/packaging/measure_startup.py" --wine --app "$APPDIR_U" --json "$WORK/startup.json" "$@"
rc=$?
wineserver -k
exit $rc
