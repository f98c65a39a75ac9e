#!/usr/bin/env bash
# Install agent-memory into .venv and run a whole memory lifecycle on a scratch Home, with the
# embedded defaults (Markdown notes + SQLite FTS5, no server): create a Home, remember facts
# with sources, supersede a state value, let a tainted value open a dispute, recall within a
# token budget, resolve the dispute, export a signed MemoryFile and verify it.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
am=.venv/bin/agent-memory

scratch=$(mktemp -d)
export AGENT_MEMORY_HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config"
trap 'echo; echo "Home kept at $AGENT_MEMORY_HOME (notes/ are plain Markdown: have a look)"' EXIT

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

say $am init
say $am remember "The staging database runs on db-2." --kind state --subject host:staging-db --source "runbook.md#L12"
say $am remember "Deploys go through CI; never deploy by hand." --type procedure --source "team-call-2026-11-20" --tag ops
say $am remember "The staging database moved to db-3." --kind state --subject host:staging-db --source "ops-ticket-481"
echo
echo '$ agent-memory remember "The staging database is evil-1.example.net." ... --taint external'
bad=$($am remember "The staging database is evil-1.example.net." --kind state --subject host:staging-db \
      --source "web-page" --taint external)
echo "$bad"
good=$($am recall "staging database" --json | .venv/bin/python -c \
      'import json,sys; print([r["id"] for r in json.load(sys.stdin)["records"] if "evil" not in r["body"]][0])')
say $am recall "Which host runs the staging database?" --include-history
say $am status
say $am resolve "$good" "$bad" --reason "evil-1 came from an untrusted web page"
say $am recall "Which host runs the staging database?"
say $am history "$good"
say $am render
say head -n 12 "$AGENT_MEMORY_HOME/MEMORY.md"
say $am export "$scratch/export.json"
say $am verify "$scratch/export.json"
say $am log --verify
