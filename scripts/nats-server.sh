#!/usr/bin/env bash
# Prints the path of a nats-server ≥ 2.10 for the tests and benchmarks that run a private JetStream
# server with `sync_interval: always` (Debian bookworm's 2.9 predates that setting).
#
# The machine's own nats-server is used when it is new enough. Otherwise Debian trixie's package (a
# static binary) is fetched with `apt-get download` through a private apt configuration under the
# project's cache (its own sources list naming the trixie suite of the mirror the machine already
# uses, its own lists and archive cache) and unpacked with `dpkg-deb -x` into
# .cache/nats-server/; nothing is installed system-wide. Idempotent: a second call prints the
# cached path at once. Concurrent calls wait for each other (flock).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${BOURSE_NATS_CACHE:-$ROOT/.cache/nats-server}"
SUITE="${BOURSE_NATS_SUITE:-trixie}"
BIN="$CACHE/root/usr/sbin/nats-server"
MIN_MINOR=10

# True when $1 runs and reports version 2.MIN_MINOR or later (or 3+).
new_enough() {
  local version
  version="$("$1" --version 2>/dev/null | sed -n 's/.*v\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')" || return 1
  [ -n "$version" ] || return 1
  local major="${version%%.*}" minor="${version#*.}"
  [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge "$MIN_MINOR" ]; }
}

if [ -z "${BOURSE_NATS_FORCE_DOWNLOAD:-}" ]; then
  for candidate in "$BIN" "$(command -v nats-server || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && new_enough "$candidate"; then
      echo "$candidate"
      exit 0
    fi
  done
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
# Another call may have finished the download while this one waited.
if [ -x "$BIN" ] && new_enough "$BIN"; then
  echo "$BIN"
  exit 0
fi

# The Debian mirror and keyring the machine's own apt sources use (deb822 or one-line format).
mirror=""
keyring=""
for sources in /etc/apt/sources.list.d/*.sources; do
  [ -f "$sources" ] || continue
  uri="$(awk '/^URIs:/ { print $2; exit }' "$sources")"
  case "$uri" in
    */debian | */debian/)
      mirror="${uri%/}"
      keyring="$(awk '/^Signed-By:/ { print $2; exit }' "$sources")"
      break
      ;;
  esac
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror="$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list)"
  mirror="${mirror%/}"
fi
if [ -z "$mirror" ]; then
  echo "nats-server.sh: no Debian mirror found in /etc/apt/sources.list*; cannot fetch nats-server" >&2
  exit 1
fi
keyring="${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}"

APT="$CACHE/apt"
mkdir -p "$APT/lists/partial" "$APT/archives/partial" "$APT/sources.list.d" "$CACHE/deb"
echo "deb [signed-by=$keyring] $mirror $SUITE main" >"$APT/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$APT/sources.list"
  -o "Dir::Etc::sourceparts=$APT/sources.list.d"
  -o "Dir::State::Lists=$APT/lists"
  -o "Dir::Cache=$APT"
  -o "Dir::Cache::archives=$APT/archives"
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
  -o "APT::Get::List-Cleanup=0"
)
echo "nats-server.sh: fetching nats-server from Debian $SUITE into $CACHE" >&2
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$CACHE/deb" && rm -f nats-server_*.deb && apt-get "${apt_opts[@]}" -qq download nats-server >&2)
deb="$(ls "$CACHE"/deb/nats-server_*.deb | head -1)"
rm -rf "$CACHE/root.tmp"
dpkg-deb -x "$deb" "$CACHE/root.tmp"
rm -rf "$CACHE/root"
mv "$CACHE/root.tmp" "$CACHE/root"
if [ ! -x "$BIN" ] || ! new_enough "$BIN"; then
  echo "nats-server.sh: $deb did not give a nats-server ≥ 2.$MIN_MINOR at $BIN" >&2
  exit 1
fi
rm -rf "$APT/lists" "$CACHE/deb"
echo "$BIN"
