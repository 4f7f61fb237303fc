#!/usr/bin/env bash
# tests/clients/inspector.sh - the official MCP Inspector CLI (2.x, run on the project-local
# Node.js 22 that tests/clients/install put in NPM_DIR) against the real safepy server over
# stdio, in each protocol era (--protocol-era legacy, auto, modern): tools/list and a
# run_python call must succeed (exit 0, a JSON result), and a call whose result has isError
# (1/0) must exit with code 5. Prints one line per check and a summary per era.
#   tests/clients/inspector.sh NPM_DIR SAFEPY_BINARY
# Exit status: 0 when every check passes, 77 (skip) when the clients are not installed, 1
# otherwise.
set -euo pipefail

SKIP=77
npm_dir="${1:?usage: inspector.sh NPM_DIR SAFEPY_BINARY}"
safepy="${2:?usage: inspector.sh NPM_DIR SAFEPY_BINARY}"
node22="$npm_dir/node_modules/node/bin/node"
inspector="$npm_dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
if [ ! -f "$npm_dir/.installed" ] || [ ! -x "$node22" ] || [ ! -f "$inspector" ]; then
  echo "SKIP: the MCP clients are not installed in $npm_dir (the clients_install test skipped or failed)" >&2
  exit "$SKIP"
fi
[ -x "$safepy" ] || { echo "FAIL: no server binary at $safepy" >&2; exit 1; }

# The Inspector keeps state in $HOME/.mcp-inspector: give it a HOME of its own.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"
mkdir -p "$HOME"
# Anything the Inspector starts with a bare `node` gets Node 22 too.
PATH="$(dirname "$node22"):$PATH"
export PATH
echo "Inspector $("$node22" -p "require('$npm_dir/node_modules/@modelcontextprotocol/inspector/package.json').version") on Node.js $("$node22" --version); server $safepy"

# inspector ERA NAME ARGS... - run the CLI; stdout in $work/NAME.out, stderr in $work/NAME.err,
# exit code in $rc.
inspector() {
  local era="$1" name="$2"
  shift 2
  rc=0
  timeout 90 "$node22" "$inspector" --cli --format json -q --protocol-era "$era" "$safepy" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}
# json_ok FILE JS_EXPR - FILE holds one JSON document `r` for which JS_EXPR is true.
json_ok() {
  "$node22" -e '
    const fs = require("node:fs");
    let r;
    try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch { process.exit(1); }
    process.exit(new Function("r", "return (" + process.argv[2] + ")")(r) ? 0 : 1);' "$1" "$2"
}

failures=0
declare -A summary
# report ERA NAME OK DETAIL - print the outcome of one check; on failure, what the CLI printed.
report() {
  local era="$1" name="$2" ok="$3" detail="$4"
  if [ "$ok" = 1 ]; then
    echo "ok   [$era] $detail"
    summary[$era]+=" $name:pass"
  else
    failures=$((failures + 1))
    summary[$era]+=" $name:FAIL"
    echo "FAIL [$era] $detail (exit $rc)"
    echo "  stdout: $(head -c 1500 "$work/$era-$name.out")"
    echo "  stderr: $(head -c 1500 "$work/$era-$name.err")"
  fi
}

for era in legacy auto modern; do
  inspector "$era" "$era-list" --method tools/list
  ok=0
  [ "$rc" = 0 ] && json_ok "$work/$era-list.out" \
    'r.result.tools.some(t => t.name === "run_python" && t.inputSchema && t.outputSchema)' && ok=1
  report "$era" list "$ok" "tools/list: exit 0, run_python with inputSchema and outputSchema"

  inspector "$era" "$era-call" --method tools/call --tool-name run_python \
    --tool-args-json '{"code":"print(1+1)"}'
  ok=0
  [ "$rc" = 0 ] && json_ok "$work/$era-call.out" \
    'r.result.isError !== true && r.result.content[0].text.includes("2") && r.result.structuredContent.status === "ok"' && ok=1
  report "$era" call "$ok" "tools/call print(1+1): exit 0, text 2, status ok"

  inspector "$era" "$era-iserror" --method tools/call --tool-name run_python \
    --tool-args-json '{"code":"1/0"}'
  ok=0
  [ "$rc" = 5 ] && ok=1
  report "$era" iserror "$ok" "tools/call 1/0: exit 5 (isError)"
done

echo "summary:"
for era in legacy auto modern; do echo "  $era:${summary[$era]}"; done
if [ "$failures" -gt 0 ]; then
  echo "FAIL: $failures Inspector check(s) failed"
  exit 1
fi
echo "PASS: Inspector CLI in every protocol era"
