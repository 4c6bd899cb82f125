#!/usr/bin/env bash
# bench/ws-compare.sh — bench:ws on two revisions in one run, interleaved (issue 30).
#
#   bench/ws-compare.sh [BASE [PAIRS]]      # default: b6003d0 against this checkout, 3 pairs
#
# BASE is checked out into a temporary git worktree (node_modules linked, removed
# at the end) and runs its own bench/ws.bench.ts; this checkout runs its own. The runs alternate
# BASE, this, BASE, this, … so that the machine's noise falls on both alike. Revisions before the
# per-address connection cap ignore BOURSE_MAX_CONNECTIONS_PER_IP; later ones take it from there
# even where their bench did not set the flag. WS_BENCH_* variables pass through (the same for
# both). Prints each run's figures as a table, then the JSON lines.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-b6003d0}
pairs=${2:-3}
node="$here/node_modules/.bin/node"
tmp=$(mktemp -d)
worktree="$tmp/base"
cleanup() {
  git -C "$here" worktree remove --force "$worktree" 2>/dev/null || rm -rf "$worktree"
  rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$here" worktree add --detach "$worktree" "$base" >/dev/null
ln -s "$(readlink -f "$here/node_modules")" "$worktree/node_modules"
export BOURSE_MAX_CONNECTIONS_PER_IP=${BOURSE_MAX_CONNECTIONS_PER_IP:-100000}

run() { # run <dir> <label>
  echo "$(date -u +%H:%M:%S) $2 ($(git -C "$1" rev-parse --short HEAD)), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  local line
  line=$(cd "$1" && "$node" bench/ws.bench.ts | tail -1) || true
  [[ $line == "{"* ]] || line='{"failed":true}'
  echo "$2 $line" >>"$tmp/lines"
}
for i in $(seq 1 "$pairs"); do
  run "$worktree" "base-$i"
  run "$here" "head-$i"
done

"$node" -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
const keys = [
  ["messagesPerSecond", "messages delivered/s"],
  ["orderReplyP50Ms", "order reply p50 ms"],
  ["orderReplyP99Ms", "order reply p99 ms"],
  ["publicLatencyP50Ms", "trade→push p50 ms"],
  ["publicLatencyP99Ms", "trade→push p99 ms"],
  ["lagP99Ms", "event-loop delay p99 ms"],
  ["ordersPerSecond", "orders/s"],
  ["coresServer", "server cores"],
  ["coresOthers", "other processes, cores"],
];
const runs = lines.map((l) => { const i = l.indexOf(" "); return [l.slice(0, i), JSON.parse(l.slice(i + 1))]; });
console.log(["figure", ...runs.map(([label]) => label)].join("\t"));
for (const [key, name] of keys) console.log([name, ...runs.map(([, r]) => r[key])].join("\t"));
console.log();
for (const l of lines) console.log(l);
' "$tmp/lines"
