#!/usr/bin/env bash
# The PostgreSQL store's tests start a throwaway server from Debian's packages (initdb and postgres,
# no cluster of the machine's is used). Installs them when missing, as root or through sudo;
# otherwise says what to run.
set -euo pipefail
if [ -n "${RUNDIFF_PG_BIN:-}" ] && [ -x "$RUNDIFF_PG_BIN/initdb" ]; then exit 0; fi
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && exit 0
echo "rundiff: PostgreSQL server programs not found; installing Debian's postgresql for the store tests" >&2
if [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
else
  echo "rundiff: run 'sudo apt-get install -y postgresql' (or set RUNDIFF_PG_BIN) and try again" >&2
  exit 1
fi
