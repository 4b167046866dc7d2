#!/usr/bin/env bash
# tools/sysroot.sh: make (once) a Debian sid sysroot holding the newest CPython releases and their
# debug builds, and numpy for both releases (sid builds python3-numpy for 3.14 and 3.15, not for
# the debug builds), for the test matrix.  sid needs a newer glibc than this machine has, so the tests
# run them through the sysroot's own loader (docs/versions-and-abi.md), never in a chroot.
#
#   PYHOST_SYSROOT  where it goes (default ${XDG_CACHE_HOME:-$HOME/.cache}/pyhost/sysroot-sid);
#                   outside the checkout so every clone and build dir shares it.
#   PYHOST_MIRROR   Debian mirror (default: the one apt already uses here).
#
# Idempotent: DIR/.pyhost-stamp is written last and lists the packages and their versions; a
# missing or outdated stamp rebuilds from scratch in DIR.tmp, renamed into place only when
# complete, so an interrupted run never looks finished.  Needs root (debootstrap, chroot).
set -euo pipefail
start=$(date +%s)
dir=${PYHOST_SYSROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/pyhost/sysroot-sid}
pkgs=(libpython3.14 libpython3.15 libpython3.14-dbg libpython3.15-dbg
      python3.14-venv python3.15-venv python3.14-dev python3.15-dev
      python3-numpy) # test_buffer's numpy cases and examples/bulk: about 11 MB, 5 s more
stamp_head="pyhost sysroot v1: ${pkgs[*]}"
die() { printf 'tools/sysroot.sh: %s\n' "$*" >&2; exit 1; }

if [ -f "$dir/.pyhost-stamp" ] && [ "$(head -n1 "$dir/.pyhost-stamp")" = "$stamp_head" ]; then
  printf 'sysroot %s is complete (%s)\n' "$dir" "$(tail -n +2 "$dir/.pyhost-stamp" | tr '\n' ' ')"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"

mirror_from_apt() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: the URIs line of the stanza whose Suites name a plain Debian release
    awk '/^URIs:/ {u=$2} /^Suites:/ && u ~ /\/debian\/?$/ {print u; exit}' "$f"
  done
  if [ -f /etc/apt/sources.list ]; then
    awk '$1=="deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list
  fi
}
mirror=${PYHOST_MIRROR:-$(mirror_from_apt | head -n1)}
[ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list{,.d}; set PYHOST_MIRROR"

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 debootstrap >/dev/null
fi
# A clear error beats debootstrap's own when the mirror is down or unreachable.
release_url="${mirror%/}/dists/sid/Release"
if ! perl -MIO::Socket::INET -e '
    my ($h, $p) = $ARGV[0] =~ m{^\w+://([^/:]+)(?::(\d+))?} or exit 2;
    IO::Socket::INET->new(PeerAddr => $h, PeerPort => $p || 80, Timeout => 20) or exit 1' "$mirror"; then
  die "cannot reach the Debian mirror $mirror (needed for $release_url); check the network or set PYHOST_MIRROR"
fi

tmp="$dir.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
# Valid-Until: the mirror's sid Release file may be past its date; its signature still holds.
debootstrap --variant=minbase sid "$tmp" "$mirror" >"$tmp.log" 2>&1 \
  || { tail -n 20 "$tmp.log" >&2; die "debootstrap sid from $mirror failed (log: $tmp.log)"; }
chroot "$tmp" apt-get install -y -qq --no-install-recommends -o Acquire::Check-Valid-Until=false \
  "${pkgs[@]}" >>"$tmp.log" 2>&1 \
  || { tail -n 20 "$tmp.log" >&2; die "apt-get install in the sysroot failed (log: $tmp.log)"; }
for v in 3.14 3.15; do
  for lib in "libpython$v.so.1.0" "libpython${v}d.so.1.0"; do
    [ -e "$tmp/usr/lib/x86_64-linux-gnu/$lib" ] || die "the sysroot lacks $lib after install"
  done
  compgen -G "$tmp/usr/lib/python3/dist-packages/numpy/_core/_multiarray_umath.cpython-${v/./}-*.so" >/dev/null \
    || echo "tools/sysroot.sh: sid's python3-numpy is not built for $v: its numpy tests skip there" >&2
done
# Debian reaches BLAS and LAPACK through /etc/alternatives: absolute links that, outside a
# chroot, would load this machine's libraries (or none).  Each becomes the relative link to
# the sysroot's own file.
for link in $(find "$tmp/usr/lib/x86_64-linux-gnu" -maxdepth 1 -lname '/etc/alternatives/*'); do
  target=$(chroot "$tmp" readlink -f "${link#"$tmp"}")
  [ -e "$tmp$target" ] || die "the sysroot's $link leads to $target, which it lacks"
  ln -sfn "$(realpath --relative-to="$(dirname "$link")" "$tmp$target")" "$link"
done
chroot "$tmp" apt-get clean
{ echo "$stamp_head"
  chroot "$tmp" dpkg-query -W -f='${Package}=${Version}\n' "${pkgs[@]}"; } >"$tmp/.pyhost-stamp.new"
mv "$tmp/.pyhost-stamp.new" "$tmp/.pyhost-stamp"
rm -rf "$dir" && mv "$tmp" "$dir" && rm -f "$tmp.log"
printf 'sysroot %s made in %ss:\n' "$dir" "$(( $(date +%s) - start ))"
tail -n +2 "$dir/.pyhost-stamp" | sed 's/^/  /'
