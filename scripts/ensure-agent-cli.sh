#!/usr/bin/env bash
# The agent end-to-end tests drive the real agent CLIs. Their binaries (hundreds of MB each) are
# kept out of the repository and of package.json: each is installed once per machine, at the pinned
# version below, into a cache folder and reused. Usage: ensure-agent-cli.sh AGENT. Prints the
# binary's path on stdout (progress goes to stderr).
set -euo pipefail
agent="${1:?usage: ensure-agent-cli.sh claude-code|codex|gemini|opencode|cline}"
case "$agent" in
  claude-code)
    version="2.1.328"
    spec="@anthropic-ai/claude-code-linux-x64@$version"
    rel="node_modules/@anthropic-ai/claude-code-linux-x64/claude"
    ;;
  codex)
    version="0.169.0"
    # Codex publishes each platform's binary as a tagged version of its main package.
    spec="@openai/codex@$version-linux-x64"
    rel="node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex"
    ;;
  gemini)
    version="0.61.0"
    spec="@google/gemini-cli@$version"
    rel="node_modules/@google/gemini-cli/bundle/gemini.js"
    ;;
  opencode)
    version="1.18.33"
    # The platform package alone: the wrapper package only picks one of these at run time.
    spec="opencode-linux-x64@$version"
    rel="node_modules/opencode-linux-x64/bin/opencode"
    ;;
  cline)
    version="3.0.65"
    spec="@cline/cli-linux-x64@$version"
    rel="node_modules/@cline/cli-linux-x64/bin/cline"
    ;;
  *)
    echo "rundiff: no pinned CLI for agent '$agent'" >&2
    exit 2
    ;;
esac
base="${RUNDIFF_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rundiff/agents}"
cache="$base/$agent-$version"
bin="$cache/$rel"
if [ ! -x "$bin" ]; then
  mkdir -p "$base"
  # Test files run in parallel and may all ask at once: one installs, the others wait for it.
  exec 9>"$cache.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    echo "rundiff: installing $spec into $cache (once per machine)" >&2
    # Installed beside the cache and moved into place whole, so an interrupted download never
    # leaves a folder that looks installed.
    staging="$(mktemp -d "$cache.partial.XXXXXX")"
    chmod 755 "$staging"
    trap 'rm -rf "$staging"' EXIT
    # --ignore-scripts: the binaries need no postinstall; --no-save: no package.json is written.
    npm install --prefix "$staging" --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
      "$spec" >&2
    [ -x "$staging/$rel" ] || { echo "rundiff: $spec has no binary at $rel" >&2; exit 1; }
    rm -rf "$cache"
    mv "$staging" "$cache"
    trap - EXIT
  fi
fi
echo "$bin"
