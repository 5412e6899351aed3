#!/usr/bin/env bash
# Sourced by wine_smoke.sh and wine_startup.sh (TEST-ONLY): a fresh 64-bit Wine prefix at
# $WORK/prefix with the Wine-gap shims, then the installer run silently into it.
#
#   wine_fresh_install SETUP.exe    → sets WINEPREFIX, APPDIR_U, DATA_U, INSTALL_S;
#                                      returns 1 when no program or Start-menu entry was installed
#
# The installed *test copy* of qdrant_edge.pyd is then pointed at the kernelwi.dll shim (Wine 8 does
# not implement SetFileInformationByHandle(FileAllocationInfo): qdrant-edge's write-ahead log).
# mscms=n: Qt's colour-profile calls go to the mscms.c stand-in (Wine 8 lacks WcsCreateIccProfile).
# Needs ROOT (the repository), WORK (a scratch folder) and LPY (a Python for the patch script).

wine_fresh_install() {
  local setup="$1" t
  rm -rf "$WORK/prefix"
  export WINEPREFIX="$WORK/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;mscms=n"
  wineboot -i >/dev/null 2>&1
  bash "$ROOT/packaging/windows/wine_shims/install.sh"
  local local_
  local_="$(wine cmd /c echo %LOCALAPPDATA% 2>/dev/null < /dev/null | tr -d '\r')"
  APPDIR_U="$(winepath -u "$local_\\Programs\\desktop-kb" 2>/dev/null)"
  DATA_U="$(winepath -u "$local_\\desktop-kb" 2>/dev/null)"
  t=$(date +%s)
  wine "$setup" /S < /dev/null
  INSTALL_S=$(( $(date +%s) - t ))
  [ -x "$APPDIR_U/desktop-kb.exe" ] && [ -f "$APPDIR_U/Uninstall.exe" ] \
    && ls "$WINEPREFIX"/drive_c/users/*/AppData/Roaming/Microsoft/Windows/Start\ Menu/Programs/desktop-kb.lnk \
       >/dev/null 2>&1 || return 1
  "$LPY" "$ROOT/packaging/windows/wine_shims/patch_qdrant.py" "$APPDIR_U/_internal/qdrant_edge/qdrant_edge.pyd" \
    "$WINEPREFIX/drive_c/windows/system32"
}
