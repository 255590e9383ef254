#!/usr/bin/env bash
# The agent end-to-end tests drive the real Claude Code CLI. Its Linux binary (~370 MB) is kept out
# of the repository and of package.json: it is installed once per machine into a cache folder and
# reused. Prints the binary's path on stdout (progress goes to stderr).
set -euo pipefail
version="2.1.328"
pkg="@anthropic-ai/claude-code-linux-x64"
base="${RUNDIFF_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rundiff/agents}"
cache="$base/claude-code-$version"
bin="$cache/node_modules/$pkg/claude"
if [ ! -x "$bin" ]; then
  mkdir -p "$base"
  # Test files run in parallel and may all ask at once: one installs, the others wait for it.
  exec 9>"$cache.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    echo "rundiff: installing $pkg@$version into $cache (once per machine)" >&2
    # Installed beside the cache and moved into place whole, so an interrupted download never
    # leaves a folder that looks installed.
    staging="$(mktemp -d "$cache.partial.XXXXXX")"
    chmod 755 "$staging"
    trap 'rm -rf "$staging"' EXIT
    # --ignore-scripts: the binary needs no postinstall; --no-save: no package.json is written.
    npm install --prefix "$staging" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
      "$pkg@$version" >&2
    [ -x "$staging/node_modules/$pkg/claude" ] || { echo "rundiff: $pkg has no claude binary" >&2; exit 1; }
    rm -rf "$cache"
    mv "$staging" "$cache"
    trap - EXIT
  fi
fi
echo "$bin"
