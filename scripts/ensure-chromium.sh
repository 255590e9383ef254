#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright downloads nothing here). Installs it when
# missing, as root or through sudo; otherwise says what to run.
set -euo pipefail
bin="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$bin" ] && exit 0
echo "rundiff: $bin not found; installing Debian's chromium for the browser tests" >&2
if [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "rundiff: run 'sudo apt-get install -y chromium' (or set CHROMIUM_PATH) and try again" >&2
  exit 1
fi
