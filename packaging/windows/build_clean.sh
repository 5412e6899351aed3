#!/usr/bin/env bash
# The Windows build and its Wine smoke test on a clean Linux machine of this kind: a fresh Debian 12
# made with debootstrap, root, the package registries only, this repository cloned into it at HEAD
# (committed files only), then packaging/windows/build.sh and packaging/windows/wine_smoke.sh as a
# user would run them, nothing built or cached beforehand.
#
#   sudo packaging/windows/build_clean.sh [--root /var/chroot/dkb-win-clean] [--log FILE]
#
# What the clean system gets from this host, and nothing else: the registries' configuration
# (pip's config files and PIP_* settings: package indexes and the local wheel folders they name,
# bound read-only; apt's sources) and the CA certificates this host's network needs to reach them
# (/usr/local/share/ca-certificates). /proc, /dev and /sys are mounted while it runs. Debian's
# packages (wine, mingw-w64, nsis, the compiler …) are installed by build.sh itself. The clean
# system is kept afterwards (its caches make a second build.sh run quick); remove the --root folder
# to start again. Needs root (debootstrap, mount, chroot); ~25 GB of disk.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT_DIR=/var/chroot/dkb-win-clean
LOG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT_DIR="$2"; shift 2 ;;
    --log) LOG="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build_clean.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "build_clean.sh needs root (debootstrap, mount, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
C="$ROOT_DIR"
if [ ! -x "$C/usr/bin/git" ]; then
  # a minimal Debian and what cloning and running the scripts needs before build.sh installs the rest
  debootstrap --variant=minbase \
    --include=ca-certificates,git,python3,python3-venv,python3-pip,sudo,procps,curl,unzip,xz-utils,file \
    bookworm "$C" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$C/etc/"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$C/etc/apt/sources.list.d/" && rm -f "$C/etc/apt/sources.list"
fi
cp /usr/local/share/ca-certificates/*.crt "$C/usr/local/share/ca-certificates/" 2>/dev/null || true
chroot "$C" update-ca-certificates >/dev/null
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$C/etc/pip.conf"
if [ -f "$HOME/.config/pip/pip.conf" ]; then
  mkdir -p "$C/root/.config/pip" && cp "$HOME/.config/pip/pip.conf" "$C/root/.config/pip/"
fi
mounts=()
mnt() { mkdir -p "$C$2"; mount "${@:3}" "$1" "$C$2"; mounts+=("$C$2"); }
cleanup() { for ((i=${#mounts[@]}-1; i>=0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
mountpoint -q "$C/proc" || mnt proc /proc -t proc
mountpoint -q "$C/dev" || mnt /dev /dev --rbind
mountpoint -q "$C/sys" || mnt /sys /sys --rbind
# the local package folders pip's configuration names (file:// indexes, find-links), read-only
for d in $(cat /etc/pip.conf "$HOME/.config/pip/pip.conf" 2>/dev/null | grep -oE '(file://)?/[^ ]+' | sed 's|^file://||' \
           | sed -E 's|/simple/?$||' | sort -u) ${PIP_FIND_LINKS:-}; do
  [ -d "$d" ] && ! mountpoint -q "$C$d" && mnt "$d" "$d" --bind -o ro
done
rm -rf "$C/root/desktop_kb"
git clone -q "$PWD" "$C/root/desktop_kb"
echo "[clean] $(date -u +%FT%TZ) clean Debian at $C, desktop_kb at $(git rev-parse --short HEAD)"
keep=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
for v in $(env | grep -oE '^PIP_[A-Z_]+' || true); do keep+=("$v=${!v}"); done
inside() { chroot "$C" /usr/bin/env -i "${keep[@]}" bash -c "cd /root/desktop_kb && $1"; }
run_all() {
  local t0 rc
  t0=$(date +%s)
  inside packaging/windows/build.sh; rc=$?
  echo "[clean] build.sh rc=$rc after $(( $(date +%s) - t0 )) s"
  [ "$rc" -eq 0 ] || return "$rc"
  t0=$(date +%s)
  inside packaging/windows/wine_smoke.sh; rc=$?
  echo "[clean] wine_smoke.sh rc=$rc after $(( $(date +%s) - t0 )) s"
  return "$rc"
}
set +e
if [ -n "$LOG" ]; then run_all 2>&1 | tee "$LOG"; rc=${PIPESTATUS[0]}; else run_all; rc=$?; fi
exit "$rc"
