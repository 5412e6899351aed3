#!/usr/bin/env bash
# TEST-ONLY: put the Wine-gap shims into $WINEPREFIX's system32 (never into the app or the installer).
# Windows 10/11 has these DLLs; Wine 8 has the first two not at all (bcryptprimitives: Rust's
# ProcessPrng, used by qdrant-edge; icuuc: the system ICU Qt6Core links) and mscms without
# WcsCreateIccProfile (Qt's Windows platform, when a window is shown). Used by build.sh (Wine runs
# PyInstaller, which imports them), wine_smoke.sh and wine_startup.sh (wine_install.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sys32="${WINEPREFIX:?}/drive_c/windows/system32"
[ -d "$sys32" ] || wineboot -i >/dev/null 2>&1
x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/bcryptprimitives.dll" "$here/bcryptprimitives.c" -ladvapi32
x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/icuuc.dll" "$here/icuuc.c"
# mscms: used only where WINEDLLOVERRIDES names mscms=n (the smoke and start-up tests: a shown window)
x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/mscms.dll" "$here/mscms.c" -Wl,--kill-at
