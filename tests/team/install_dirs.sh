#!/usr/bin/env bash
# tests/team/install_dirs.sh - the install rules follow GNUInstallDirs: configured with other
# bin, libexec, man and doc directories, the generated install scripts put safepy,
# safepy-zygote, the man page and the docs there, and safepy looks for its zygote relative to
# the bin directory it is installed in. Configures a scratch tree only: nothing is built.
#   install_dirs.sh SOURCE_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (no cmake).
set -uo pipefail

src=$(cd "${1:?usage: install_dirs.sh SOURCE_DIR}" && pwd)
command -v cmake >/dev/null || { echo "SKIP: cmake is not installed" >&2; exit 77; }
tmp=$(mktemp -d /tmp/safepy-install-dirs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
expect() { # expect DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

if ! cmake -S "$src" -B "$tmp/build" -DSAFEPY_TESTS=OFF -DCMAKE_INSTALL_BINDIR=xbin \
     -DCMAKE_INSTALL_LIBEXECDIR=xlibexec -DCMAKE_INSTALL_MANDIR=xman \
     -DCMAKE_INSTALL_DOCDIR=xdoc >"$tmp/cmake.log" 2>&1; then
  cat "$tmp/cmake.log"
  echo "FAIL  cmake configure"
  exit 1
fi
rules=$(find "$tmp/build" -name cmake_install.cmake -exec cat {} +)
# installs DESTINATION [FILE]: an install rule into DESTINATION under the prefix (of FILE).
installs() {
  grep -F "file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/$1\"" <<<"$rules" |
    grep -qF "${2:-}"
}
expect "safepy goes to xbin" installs xbin "/supervisor/safepy\""
expect "safepy-zygote goes to xlibexec/safepy" installs xlibexec/safepy "/safepy-zygote\""
expect "the man page goes to xman/man1" installs xman/man1 "/docs/safepy.1\""
expect "the docs go to xdoc" installs xdoc
expect "nothing goes to a literal bin, libexec or share directory" \
  bash -c '! grep -E "DESTINATION \"\\\$\{CMAKE_INSTALL_PREFIX\}/(bin|libexec|share)[/\"]" <<<"$1"' \
  _ "$rules"
expect "safepy finds its zygote at ../xlibexec/safepy from xbin" \
  grep -qF 'SAFEPY_LIBEXEC_REL=\"../xlibexec/safepy\"' \
  "$tmp/build/supervisor/CMakeFiles/safepy.dir/flags.make"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
