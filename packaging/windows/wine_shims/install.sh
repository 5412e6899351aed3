#!/usr/bin/env bash
# TEST-ONLY: put the Wine-gap shims into $WINEPREFIX's system32 (never into the app or the installer).
# Windows 10/11 has both DLLs; Wine 8 has neither (bcryptprimitives: Rust's ProcessPrng, used by
# qdrant-edge; icuuc: the system ICU Qt6Core links). Used by build.sh (Wine runs PyInstaller, which
# imports them) and wine_smoke.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sys32="${WINEPREFIX:?}/drive_c/windows/system32"
[ -d "$sys32" ] || wineboot -i >/dev/null 2>&1
x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/bcryptprimitives.dll" "$here/bcryptprimitives.c" -ladvapi32
x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/icuuc.dll" "$here/icuuc.c"
