#!/usr/bin/env bash
# tests/team/systemd.sh - the .deb under a real systemd: boots systemd as PID 1 of throw-away
# pid, mount, cgroup, uts and ipc namespaces whose root is this machine's root with /usr, /etc
# and /var as overlays (nothing is written to the machine itself), then installs the package
# with dpkg while systemd runs and checks that the socket is started with its owner and mode,
# that connections are served by their own instances under their own dynamic users, that
# the group decides who connects, that the client's uid is logged, that `safepy doctor` under
# the unit's hardening (safepy-doctor.service) finds every sandbox layer and the delegated
# cgroup, and that removing the package stops the socket.
# For a machine whose PID 1 is not systemd (a container); where systemd is PID 1, install the
# package for real instead (docs/team-box.md).
#   systemd.sh BUILD_DIR
# Exit status: 0 passed, 1 failed, 77 skipped.
set -uo pipefail

build=$(cd "${1:?usage: systemd.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -d /run/systemd/system ] && skip "systemd is PID 1 here: install the package for real instead"
[ -x /lib/systemd/systemd ] || skip "systemd is not installed"
for t in cpack unshare nsenter setpriv python3; do
  command -v "$t" >/dev/null || skip "$t is not installed"
done
grep -qw overlay /proc/filesystems || skip "no overlayfs"
# cgroups for the inner systemd: a scratch cgroup in each hierarchy it would use.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
  layout=unified
elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] &&
     [ -d /sys/fs/cgroup/systemd ]; then
  layout=hybrid
else
  skip "no cgroup v2 hierarchy that systemd could use"
fi

# Scratch cgroups of an earlier run that was killed (its pid is gone) are removed first.
for cg in /sys/fs/cgroup/safepy-systemd-test-* /sys/fs/cgroup/systemd/safepy-systemd-test-* \
          /sys/fs/cgroup/unified/safepy-systemd-test-*; do
  [ -d "$cg" ] && ! kill -0 "${cg##*-}" 2>/dev/null && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
done
tmp=$(mktemp -d /tmp/safepy-systemd-XXXXXX)
name=safepy-systemd-test-$$
cgroups=()
if [ $layout = unified ]; then
  cgroups=(/sys/fs/cgroup/$name)
else
  cgroups=(/sys/fs/cgroup/systemd/$name /sys/fs/cgroup/unified/$name)
fi
pid1=
cleanup() {
  [ -n "$pid1" ] && kill -9 "$pid1" 2>/dev/null
  [ -n "${boot_pid:-}" ] && wait "$boot_pid" 2>/dev/null
  for cg in "${cgroups[@]}"; do
    [ -d "$cg" ] || continue
    for i in 1 2 3 4 5; do
      find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
      [ -d "$cg" ] || break
      sleep 0.2
    done
    [ -d "$cg" ] && echo "warning: could not remove $cg" >&2
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
for cg in "${cgroups[@]}"; do
  mkdir "$cg" || skip "cannot create the cgroup $cg"
done

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || {
  cat "$tmp/cpack.log"; echo "FAIL  cpack -G DEB"; exit 1; }
deb=$(ls "$tmp"/out/safepy_*_*.deb | head -1)

# The boot: move into the scratch cgroups, then new namespaces, the overlaid root, and
# systemd as PID 1 after pivot_root (a chroot would forbid user namespaces in the units).
cat >"$tmp/boot.sh" <<'EOF'
set -eu
tmp=$1 layout=$2
shift 2
for cg in "$@"; do echo $$ >"$cg/cgroup.procs"; done
exec unshare -C -m -u -i --propagation private -- bash -c '
set -eu
tmp=$1 layout=$2
shift 2
R=$tmp/root
mkdir -p $R $tmp/ov
mount -t tmpfs tmpfs $tmp/ov
mount --bind / $R
for d in usr etc var; do
  mkdir -p $tmp/ov/$d.up $tmp/ov/$d.work
  mount -t overlay overlay -o lowerdir=/$d,upperdir=$tmp/ov/$d.up,workdir=$tmp/ov/$d.work $R/$d
done
mount -t tmpfs -o mode=755 tmpfs $R/run
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount --bind /sys $R/sys
if [ $layout = unified ]; then
  mount --bind "$1" $R/sys/fs/cgroup
else
  mount -t tmpfs -o mode=755 tmpfs $R/sys/fs/cgroup
  mkdir $R/sys/fs/cgroup/systemd $R/sys/fs/cgroup/unified
  mount --bind "$1" $R/sys/fs/cgroup/systemd
  mount --bind "$2" $R/sys/fs/cgroup/unified
fi
mount -t tmpfs -o mode=755 tmpfs $R/dev
for n in null zero full random urandom tty; do
  touch $R/dev/$n; mount --bind /dev/$n $R/dev/$n
done
mkdir $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts
ln -s pts/ptmx $R/dev/ptmx
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
touch $tmp/console $R/dev/console
mount --bind $tmp/console $R/dev/console
# A Docker-style policy-rc.d would keep dpkg from starting units, as no Debian machine does.
rm -f $R/usr/sbin/policy-rc.d
cat >$R/etc/systemd/system/safepy-test.target <<EOT
[Unit]
Description=safepy test boot
Wants=sockets.target systemd-journald.service
AllowIsolate=yes
EOT
mkdir $R/tmp/oldroot
exec unshare -p -f --kill-child -- bash -c "
  mount -t proc proc $R/proc
  cd $R
  pivot_root . tmp/oldroot
  umount -l /tmp/oldroot
  rmdir /tmp/oldroot
  exec env -i container=safepy-test /lib/systemd/systemd --system \
    --unit=safepy-test.target --log-target=journal --show-status=no
"
' boot "$tmp" "$layout" "$@"
EOF
# If this script is killed (a ctest timeout), the parent-death signal takes the boot chain
# with it, and --kill-child then systemd and its whole pid namespace.
setpriv --pdeathsig KILL bash "$tmp/boot.sh" "$tmp" "$layout" "${cgroups[@]}" >"$tmp/boot.log" 2>&1 &
boot_pid=$!

# PID 1 of the new pid namespace, as this machine sees it.
for _ in $(seq 100); do
  pid1=$(pgrep -f -- '--unit=safepy-test.target' | while read -r p; do
    [ "$(awk '/^NSpid:/ {print $NF}' /proc/$p/status 2>/dev/null)" = 1 ] && echo "$p"; done | head -1)
  [ -n "$pid1" ] && break
  sleep 0.1
done
[ -n "$pid1" ] || { cat "$tmp/boot.log"; echo "FAIL  systemd did not start"; exit 1; }
# Commands inside get the container's own environment, not this test's (PATH, HOME).
inside() { nsenter -t "$pid1" -a -w -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
for _ in $(seq 100); do
  state=$(inside systemctl is-system-running 2>/dev/null)
  case "$state" in running|degraded) break ;; esac
  sleep 0.2
done
echo "info  systemd $(inside systemctl --version | head -1 | awk '{print $2}') is PID 1 ($state)"

failures=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok    $what"; else echo "FAIL  $what"; failures=$((failures + 1)); fi
}
put() { inside sh -c "cat >'$2'" <"$1"; }
put "$deb" /tmp/safepy.deb
put "$here/mcp_client.py" /tmp/mcp_client.py

dpkg_in() { inside DEBIAN_FRONTEND=noninteractive dpkg "$@" >/dev/null 2>&1; }
socket_is() { [ "$(inside systemctl "is-$1" safepy.socket)" = "$2" ]; }
check "dpkg -i while systemd runs" dpkg_in -i /tmp/safepy.deb
check "safepy.socket is enabled and listening" \
  eval 'socket_is enabled enabled && socket_is active active'
check "the socket is root:safepy, mode 0660" \
  test "$(inside stat -c '%U:%G %a' /run/safepy/safepy.sock)" = "root:safepy 660"

client() { inside "$@" python3 /tmp/mcp_client.py 'x = 41' 'x + 1' 'import os' -- /usr/bin/safepy connect; }
out=$(client 2>&1)
check "a full MCP exchange through safepy connect" \
  test "$out" = "$(printf 'server safepy\nok 41\nok 42\nerror ModuleNotFoundError')"
[ "$out" = "$(printf 'server safepy\nok 41\nok 42\nerror ModuleNotFoundError')" ] || echo "$out" | sed 's/^/      | /'

inside useradd -u 4201 -M outsider
inside useradd -u 4202 -M -G safepy member
out=$(inside setpriv --reuid=4201 --regid=4201 --init-groups /usr/bin/safepy connect </dev/null 2>&1)
check "a user outside the group is refused, with the hint" grep -q 'safepy group' <<<"$out"
out=$(client setpriv --reuid=4202 --regid=4202 --init-groups 2>&1)
check "a member of the group is served" grep -qx 'ok 42' <<<"$out"
grep -qx 'ok 42' <<<"$out" || sed 's/^/      | /' <<<"$out"
sleep 0.5
check "the server logged the member's uid (SO_PEERCRED)" \
  grep -q "client: uid 4202 (member)" <<<"$(inside journalctl --no-pager -o cat -t safepy)"

# Two connections at once: two instances, two dynamic users.
inside python3 /tmp/mcp_client.py 'import time; time.sleep(2)' -- /usr/bin/safepy connect >/dev/null 2>&1 &
c1=$!
inside python3 /tmp/mcp_client.py 'import time; time.sleep(2)' -- /usr/bin/safepy connect >/dev/null 2>&1 &
c2=$!
sleep 1
users=$(inside ps -eo user:32=,args= | awk '$2 == "/usr/bin/safepy" && $3 == "serve" {print $1}' | sort -u)
check "two connections run as two dynamic users ($(echo $users))" \
  test "$(wc -l <<<"$users")" -eq 2
wait "$c1" "$c2"

out=$(inside systemctl start safepy-doctor.service 2>&1; inside journalctl --no-pager -o cat -u safepy-doctor.service)
check "safepy-doctor.service succeeds: safepy can run code under the hardening" \
  grep -q '^verdict: safepy can run code here' <<<"$out"
for layer in seccomp no_new_privs namespaces landlock fork_gate 'syscall report'; do
  check "  under it, $layer is active" grep -Eq "^$layer +active " <<<"$out"
done
check "  and the delegated cgroup is found (the uid may write it)" \
  grep -Eq '^cgroups +(active|unavailable) +.*(delegated cgroup .*safepy-doctor.service)' <<<"$out"
grep -E '^cgroups ' <<<"$out" | sed 's/^/info  /'

check "dpkg -r stops the socket" eval 'dpkg_in -r safepy && ! socket_is active active'

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed; boot log:" >&2
  sed 's/^/      | /' "$tmp/boot.log" >&2
  exit 1
fi
echo "all checks passed"
