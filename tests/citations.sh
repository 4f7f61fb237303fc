#!/usr/bin/env bash
# tests/citations.sh - comments and docs speak of the project only: no section of a document
# outside the repository (a "§", a .md file the repository does not have), no URL, no
# proposal, issue or pull request number, no file:line of another project.
#   citations.sh SOURCE_DIR
# Exit status: 0 passed, 1 failed.
set -uo pipefail

src=$(cd "${1:?usage: citations.sh SOURCE_DIR}" && pwd)
cd "$src" || exit 1
files=(protocol/*.c protocol/*.h protocol/*.cmake seccomp/* worker/sandbox.c
       supervisor/{config,doctor,main,runcmd,server,cgroup,connect,peer,log,loop}.c
       supervisor/supervisor.h CMakeLists.txt */CMakeLists.txt scripts/* contrib/*/* docs/*)
failures=0
flag() { # flag WHAT: grep's matches on stdin
  local hits
  hits=$(cat)
  [ -z "$hits" ] && return
  echo "FAIL  $1:"
  sed 's/^/      /' <<<"$hits"
  failures=$((failures + 1))
}

flag "a section, proposal, URL or issue number" < <(grep -nE \
  '§|SEP-[0-9]|https?://|(issues|pull)/[0-9]|[^&]#[0-9]{3,}\b' "${files[@]}")
flag "a file:line" < <(grep -nE '\b[A-Za-z0-9_.-]+\.(c|h|py|ts|js|rs|go):[0-9]+' "${files[@]}")
# Every .md file named must be one of the repository's (troff writes its hyphens "\-").
known=$(find . -name '*.md' -not -path './build*' -printf '%f\n' | sort -u)
flag "a document the repository does not have" < <(
  grep -noE '[A-Za-z0-9_.\\-]+\.mdx?\b' "${files[@]}" | tr -d '\\' |
    while IFS=: read -r f l name; do
      grep -qxF "$name" <<<"$known" || echo "$f:$l: $name"
    done)

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
