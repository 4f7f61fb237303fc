#!/usr/bin/env bash
# tests/team/package.sh - the .deb: CPack builds it; unpacked into a scratch root it puts
# safepy, safepy-zygote, the units, the man page and the docs where the units expect them;
# the units pass `systemd-analyze verify` against that root; the relocated binary runs code.
# As root it then installs the package for real with dpkg, inside a private mount namespace
# whose /usr, /etc and /var are overlays (and /run a tmpfs, so no systemd is contacted): the
# maintainer scripts create the group and enable the socket, and remove/purge undo it. The
# host is untouched.
#   package.sh BUILD_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (no cpack or dpkg-deb).
set -uo pipefail

build=$(cd "${1:?usage: package.sh BUILD_DIR}" && pwd)
for t in cpack dpkg-deb; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed" >&2; exit 77; }
done
tmp=$(mktemp -d /tmp/safepy-package-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
expect() { # expect DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

# ---- build ----
if ! (cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1); then
  cat "$tmp/cpack.log"
  echo "FAIL  cpack -G DEB"
  exit 1
fi
deb=$(ls "$tmp"/out/safepy_*_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL  no .deb in $tmp/out"; ls -R "$tmp/out"; exit 1; }
ok "cpack -G DEB built $(basename "$deb")"

# ---- control data ----
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libseccomp2 libcap2 libjson-c5 libpython3.11 libexpat1 zlib1g adduser; do
  expect "Depends names $lib" grep -Eq "(^|, )$lib( |,|$)" <<<"$depends"
done
mkdir "$tmp/control"
dpkg-deb -e "$deb" "$tmp/control"
for s in postinst prerm postrm; do
  expect "maintainer script $s is executable and parses" \
    bash -c '[ -x "$1" ] && sh -n "$1"' _ "$tmp/control/$s"
done

# ---- files in a scratch root ----
root=$tmp/root
dpkg-deb -x "$deb" "$root"
units=$root/usr/lib/systemd/system
expect "usr/bin/safepy is executable" test -x "$root/usr/bin/safepy"
expect "usr/libexec/safepy/safepy-zygote is executable" \
  test -x "$root/usr/libexec/safepy/safepy-zygote"
for u in safepy.socket safepy@.service safepy-doctor.service; do
  expect "unit $u in usr/lib/systemd/system" test -f "$units/$u"
done
expect "man page usr/share/man/man1/safepy.1" test -f "$root/usr/share/man/man1/safepy.1"
expect "README in usr/share/doc/safepy" test -f "$root/usr/share/doc/safepy/README.md"

for u in safepy@.service safepy-doctor.service; do
  exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$units/$u")
  expect "$u starts $exe, which the package installs" \
    bash -c '[ "$1" = /usr/bin/safepy ] && [ -x "$2$1" ]' _ "$exe" "$root"
done
expect "safepy.socket listens on /run/safepy/safepy.sock, Accept=yes, group safepy, 0660" \
  bash -c 'grep -qx "ListenStream=/run/safepy/safepy.sock" "$1" && grep -qx "Accept=yes" "$1" &&
           grep -qx "SocketGroup=safepy" "$1" && grep -qx "SocketMode=0660" "$1"' _ "$units/safepy.socket"
hardening() { sed -n '/^# -- hardening begin --$/,/^# -- hardening end --$/p' "$1"; }
expect "safepy-doctor.service has safepy@.service's hardening, line for line" \
  bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$(hardening "$units/safepy@.service")" \
  "$(hardening "$units/safepy-doctor.service")"
expect "safepy@.service has StandardInput=socket, StandardOutput=socket, StandardError=journal" \
  bash -c 'grep -qx StandardInput=socket "$1" && grep -qx StandardOutput=socket "$1" &&
           grep -qx StandardError=journal "$1"' _ "$units/safepy@.service"

# The relocated binary (built for another prefix) finds its zygote relative to itself.
out=$("$root/usr/bin/safepy" run -c '6 * 7' 2>&1)
expect "the unpacked usr/bin/safepy runs code (zygote found in ../libexec/safepy)" \
  grep -qx 42 <<<"$out"

# systemd-analyze verify resolves ExecStart= and the default dependencies under --root, so
# the root gets the machine's own units beside ours; MANPATH lets it find safepy(1).
if command -v systemd-analyze >/dev/null; then
  for d in /usr/lib/systemd/system /lib/systemd/system; do
    [ -d "$d" ] && cp -an "$d/." "$units/" 2>/dev/null
  done
  out=$(MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" \
    "$units/safepy.socket" "$units/safepy@.service" "$units/safepy-doctor.service" 2>&1)
  status=$?
  if [ $status -eq 0 ] && [ -z "$out" ]; then
    ok "systemd-analyze verify --root: the three units, no warnings"
  else
    fail "systemd-analyze verify --root (status $status):"
    sed 's/^/      | /' <<<"$out"
  fi
else
  echo "skip  systemd-analyze is not installed"
fi

# ---- a real dpkg -i, -r, -P in a throw-away overlay of this machine ----
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v dpkg >/dev/null ||
   ! grep -qw overlay /proc/filesystems; then
  echo "skip  dpkg -i in an overlay (needs root, unshare, dpkg and overlayfs)"
else
  mkdir -p "$tmp/ov"
  out=$(unshare -m --propagation private -- bash -s "$deb" "$tmp/ov" <<'EOF' 2>&1
set -u
deb=$1 ov=$2
mount -t tmpfs tmpfs "$ov" || exit 1
for d in usr etc var; do
  mkdir -p "$ov/$d.up" "$ov/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$ov/$d.up,workdir=$ov/$d.work" "/$d" || exit 1
done
# No /run/systemd/system: the scripts must not reach this machine's systemd.
mount -t tmpfs tmpfs /run || exit 1
check() { if "${@:2}"; then echo "ok    $1"; else echo "FAIL  $1"; fi; }
getent group safepy >/dev/null && echo "note  group safepy already exists here"
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$ov/dpkg.log" 2>&1
check "dpkg -i succeeds" [ $? -eq 0 ]
check "postinst created the group safepy" getent group safepy
check "postinst enabled safepy.socket (sockets.target.wants)" \
  test -L /etc/systemd/system/sockets.target.wants/safepy.socket
check "the installed /usr/bin/safepy runs code" bash -c '[ "$(/usr/bin/safepy run -c "6 * 7" 2>/dev/null)" = 42 ]'
check "the installed /usr/bin/safepy doctor says code can run" \
  bash -c '/usr/bin/safepy doctor 2>/dev/null | grep -q "^verdict: safepy can run code here"'
if command -v systemd-analyze >/dev/null; then
  v=$(systemd-analyze verify /usr/lib/systemd/system/safepy.socket \
      /usr/lib/systemd/system/safepy@.service /usr/lib/systemd/system/safepy-doctor.service 2>&1)
  check "systemd-analyze verify of the installed units, no warnings" [ -z "$v" ]
  [ -z "$v" ] || echo "$v"
fi
DEBIAN_FRONTEND=noninteractive dpkg -r safepy >>"$ov/dpkg.log" 2>&1
check "dpkg -r succeeds" [ $? -eq 0 ]
check "remove took the binary and the units" \
  bash -c '! [ -e /usr/bin/safepy ] && ! [ -e /usr/lib/systemd/system/safepy.socket ]'
check "remove took the enablement link" \
  bash -c '! [ -e /etc/systemd/system/sockets.target.wants/safepy.socket ]'
DEBIAN_FRONTEND=noninteractive dpkg -P safepy >>"$ov/dpkg.log" 2>&1
check "dpkg -P succeeds" [ $? -eq 0 ]
check "purge left no state of safepy.socket" \
  bash -c '! ls /var/lib/systemd/deb-systemd-helper-*/*safepy* >/dev/null 2>&1 &&
           ! ls -R /etc/systemd/system 2>/dev/null | grep -q safepy'
sed 's/^/      dpkg| /' "$ov/dpkg.log" | grep -iE 'error|warn' || true
EOF
  )
  echo "$out"
  grep -q '^FAIL' <<<"$out" && failures=$((failures + 1))
  grep -q '^ok    dpkg -i succeeds' <<<"$out" || { echo "FAIL  dpkg -i in an overlay did not run"; failures=$((failures + 1)); }
fi

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
