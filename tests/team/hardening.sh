#!/usr/bin/env bash
# tests/team/hardening.sh - does the sandbox still come up under safepy@.service's hardening?
# systemd is not PID 1 on the test machine, so each directive is reproduced with what it does
# to the process (a uid, no_new_privs, an empty bounding set, new namespaces, mounts, rlimits,
# and the seccomp filters systemd builds, loaded by sdfilter), one at a time and all together,
# and `safepy doctor` must find every layer it finds without them. docs/team-box.md lists what
# each case stands for and what cannot be reproduced here.
#   hardening.sh SAFEPY_BIN SDFILTER
# Exit status: 0 all cases passed, 1 a case failed, 77 skipped (needs root, unshare, setpriv).
set -uo pipefail

bin=${1:?usage: hardening.sh SAFEPY_BIN SDFILTER}
sdfilter=${2:?usage: hardening.sh SAFEPY_BIN SDFILTER}
zygote="$(dirname "$bin")/safepy-zygote"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (namespaces, mounts, other uids)" >&2
  exit 77
fi
for t in unshare setpriv prlimit findmnt; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (util-linux)" >&2; exit 77; }
done

# The binaries go where PrivateTmp= and ProtectHome= do not hide them, readable by the
# dynamic uid; a unit finds them in /usr, which stays readable under ProtectSystem=strict.
stage=/run/safepy-hardening-$$
trap 'rm -rf "$stage"' EXIT
mkdir -m 755 "$stage" || exit 1
cp "$bin" "$stage/safepy" && cp "$zygote" "$stage/safepy-zygote" && cp "$sdfilter" "$stage/sdfilter" &&
  cp "$(dirname "$0")/sessions_load.py" "$stage/" || exit 1
chmod 755 "$stage"/*

dyn_uid=61184 # the first uid of systemd's DynamicUser= range
as_dynamic_user=(setpriv --reuid=$dyn_uid --regid=$dyn_uid --clear-groups --no-new-privs
                 --inh-caps=-all --bounding-set=-all)
failures=0

# check NAME EXPECT_UID_LINE -- COMMAND...: run COMMAND (which ends in `safepy doctor`) and
# require every layer doctor reports on this machine without hardening.
check() {
  local name=$1 out status
  shift
  out=$(cd / && "$@" 2>&1)
  status=$?
  local bad=""
  [ $status -eq 0 ] || bad+=" exit=$status"
  grep -q '^verdict: safepy can run code here' <<<"$out" || bad+=" verdict"
  for layer in seccomp no_new_privs capabilities rlimits fds setsid pdeathsig namespaces \
               landlock fork_gate 'syscall report'; do
    grep -Eq "^$layer +active " <<<"$out" || bad+=" $layer"
  done
  grep -Eq '^uid +(active|not needed) ' <<<"$out" || bad+=" uid"
  grep -q '^canary call: *ok' <<<"$out" || bad+=" canary"
  if [ -z "$bad" ]; then
    echo "ok    $name"
  else
    echo "FAIL  $name:$bad"
    sed 's/^/      | /' <<<"$out"
    failures=$((failures + 1))
  fi
}

# Mounts systemd sets up for the unit, in a private mount namespace ($1: also the proc options
# of ProtectProc=invisible and ProcSubset=pid).
mounts_script='
set -e
stage=$1 proc=$2
mount --make-rprivate /
# PrivateDevices=yes: a fresh /dev with the pseudo devices only.
mkdir -p "$stage/devsave"
mount -t tmpfs tmpfs "$stage/devsave"
for n in null zero full random urandom tty; do
  touch "$stage/devsave/$n"; mount --bind "/dev/$n" "$stage/devsave/$n"
done
mount -t tmpfs -o mode=755,nosuid,noexec tmpfs /dev
for n in null zero full random urandom tty; do
  touch "/dev/$n"; mount --bind "$stage/devsave/$n" "/dev/$n"
done
mkdir /dev/shm /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
ln -s /proc/self/fd /dev/fd
# PrivateTmp=yes
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
# ProtectHome=yes: inaccessible
for d in /home /root /run/user; do
  [ -d "$d" ] && mount -t tmpfs -o mode=000 tmpfs "$d"
done
# ProtectKernelTunables=yes: /proc/sys and /sys read-only (/sys/fs/cgroup stays writable,
# as systemd leaves it for ProtectControlGroups=)
mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys
mount -o remount,bind,ro /sys
# ProtectSystem=strict: everything else read-only
findmnt -rn -o TARGET | while read -r t; do
  t=$(printf "%b" "$t")
  case "$t" in
    /dev|/dev/*|/proc|/proc/*|/sys|/sys/*|/tmp|/var/tmp|/home|/root|/run/user|"$stage"/*) continue ;;
  esac
  mount -o remount,bind,ro "$t" 2>/dev/null || true
done
# ProtectProc=invisible, ProcSubset=pid: a proc instance with these options
if [ -n "$proc" ]; then
  mount -t proc -o "$proc" proc /proc
fi
shift 2
exec "$@"
'

doctor=("$stage/safepy" doctor --max-workers 4 --max-sessions 8)

check "baseline (root, no hardening)" "${doctor[@]}"
check "DynamicUser=, NoNewPrivileges=, CapabilityBoundingSet=, AmbientCapabilities=" \
  "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "PrivateNetwork=yes" unshare -n -- "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "PrivateIPC=yes" unshare -i -- "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "ProtectHostname=yes (UTS namespace)" unshare -u -- "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "LimitNOFILE=1024, TasksMax=640 (as RLIMIT_NPROC of the instance's own uid), UMask=0077" \
  prlimit --nofile=1024:1024 --nproc=640 -- \
  sh -c 'umask 077 && exec "$@"' sh "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "ProtectSystem=strict, ProtectHome=yes, PrivateTmp=yes, PrivateDevices=yes, ProtectKernelTunables=yes" \
  unshare -m -- bash -c "$mounts_script" mounts "$stage" "" "${as_dynamic_user[@]}" -- "${doctor[@]}"
check "ProtectProc=invisible, ProcSubset=pid" \
  unshare -m -- bash -c "$mounts_script" mounts "$stage" "hidepid=invisible,subset=pid" \
  "${as_dynamic_user[@]}" -- "${doctor[@]}"
for d in restrict-address-families memory-deny-write-execute restrict-realtime \
         restrict-suid-sgid restrict-namespaces protect-kernel-tunables protect-kernel-modules \
         protect-kernel-logs protect-clock private-devices protect-hostname archs-native \
         lock-personality system-call-filter; do
  check "seccomp of --$d" "${as_dynamic_user[@]}" -- "$stage/sdfilter" "--$d" -- "${doctor[@]}"
done
all=(unshare -m -n -i -u -- bash -c "$mounts_script" mounts "$stage" "hidepid=invisible,subset=pid"
     prlimit --nofile=1024:1024 --nproc=640 -- "${as_dynamic_user[@]}" -- "$stage/sdfilter" --all --)
check "all of safepy@.service together" "${all[@]}" "${doctor[@]}"

# And real calls under all of it: a result, a refused import, a sandbox kill named.
out=$(cd / && "${all[@]}" "$stage/safepy" run -c 'import json
json.dumps({"x": [1, 2]})' 2>&1)
if [ $? -eq 0 ] && grep -q '{"x": \[1, 2\]}' <<<"$out"; then
  echo "ok    safepy run under all of it"
else
  echo "FAIL  safepy run under all of it"; sed 's/^/      | /' <<<"$out"; failures=$((failures + 1))
fi

# The connection's peak as the unit configures it (--max-workers 4 --max-sessions 8) fits in
# TasksMax=640 and LimitNOFILE=1024, and a session that takes all the tasks it may (64) leaves
# the others theirs.
if command -v python3 >/dev/null; then
  out=$(cd / && "${all[@]}" python3 "$stage/sessions_load.py" "$stage/safepy" serve \
        --max-workers 4 --max-sessions 8 --allow-import threading --log-level warn 2>&1)
  if [ $? -eq 0 ]; then
    echo "ok    8 sessions and 6 calls at once, and one session taking its tasks, under all of it, within RLIMIT_NPROC 640"
  else
    echo "FAIL  8 sessions and 6 calls at once under all of it"; sed 's/^/      | /' <<<"$out"
    failures=$((failures + 1))
  fi
else
  echo "skip  the session load (no python3)"
fi

if [ $failures -ne 0 ]; then
  echo "$failures case(s) failed" >&2
  exit 1
fi
echo "all cases passed"
