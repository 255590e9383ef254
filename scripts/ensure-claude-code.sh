#!/usr/bin/env bash
# The agent end-to-end tests drive the real Claude Code CLI. Its Linux binary (~370 MB) is kept out
# of the repository and of package.json: it is installed once per machine into a cache folder and
# reused. Prints the binary's path on stdout (progress goes to stderr).
set -euo pipefail
version="2.1.328"
pkg="@anthropic-ai/claude-code-linux-x64"
cache="${RUNDIFF_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rundiff/agents}/claude-code-$version"
bin="$cache/node_modules/$pkg/claude"
if [ ! -x "$bin" ]; then
  echo "rundiff: installing $pkg@$version into $cache (once per machine)" >&2
  mkdir -p "$cache"
  # --ignore-scripts: the binary needs no postinstall; --no-save: the cache folder gets no package.json edits.
  npm install --prefix "$cache" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
  [ -x "$bin" ] || { echo "rundiff: $bin missing after install" >&2; exit 1; }
fi
echo "$bin"
