#!/bin/sh
# Add desktop-kb to your applications menu (current user, no root needed), pointing at this folder.
#   ./install-desktop-entry.sh            install (re-run after moving the folder)
#   ./install-desktop-entry.sh --remove   remove the menu entry and icon
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
apps="$data/applications"
icons="$data/icons/hicolor/256x256/apps"
if [ "${1:-}" = "--remove" ]; then
  rm -f "$apps/desktop-kb.desktop" "$icons/desktop-kb.png"
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" || true
  echo "desktop-kb: menu entry removed (your documents' data folder is kept)."
  exit 0
fi
mkdir -p "$apps" "$icons"
cp "$here/desktop-kb.png" "$icons/desktop-kb.png"
sed -e "s|^Exec=.*|Exec=\"$here/desktop-kb-gui\"|" \
    -e "s|^Icon=.*|Icon=desktop-kb|" \
    "$here/desktop-kb.desktop" > "$apps/desktop-kb.desktop"
printf 'TryExec=%s\n' "$here/desktop-kb-gui" >> "$apps/desktop-kb.desktop"
chmod 0755 "$apps/desktop-kb.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q "$data/icons/hicolor" 2>/dev/null || true
echo "desktop-kb: added to the applications menu ($apps/desktop-kb.desktop)."
