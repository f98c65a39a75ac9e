#!/usr/bin/env bash
# Install the pgvector extension into the newest local PostgreSQL (issue 4 item 8), so that
# `CREATE EXTENSION vector` works for PgVectorIndex and its tests.
#
# Idempotent: does nothing when the server already has `vector.control`. Otherwise, in order:
#   1. Debian's binary package postgresql-<major>-pgvector, where the configured sources have it
#      (Debian 13 and later);
#   2. else (Debian 12 has no such package) Debian 13's source package `pgvector` fetched with a
#      private apt configuration -- a temporary deb-src list, state and cache in a temporary
#      folder; the system's apt sources are never changed -- and built against this server with
#      postgresql-server-dev-<major> and `make OPTFLAGS=""` (the upstream default -march=native
#      would make a build that only runs on this processor).
# The mirror is not written here: it is the one the machine's own apt sources use for Debian.
#
# Needs root and apt-get. Environment: PGVECTOR_SUITE (default trixie) names the suite whose
# source package is built.
set -euo pipefail

suite="${PGVECTOR_SUITE:-trixie}"

say() { echo "install-pgvector: $*" >&2; }

pg_config_bin=""
for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n -r); do
  if [ -x "$candidate/pg_config" ] || [ -x "$candidate/initdb" ]; then
    major="$(basename "$(dirname "$candidate")")"
    pg_config_bin="$candidate/pg_config"
    break
  fi
done
if [ -z "$pg_config_bin" ]; then
  say "no PostgreSQL server under /usr/lib/postgresql: install PostgreSQL first"
  exit 1
fi
extension_dir="/usr/share/postgresql/$major/extension"
if [ -f "$extension_dir/vector.control" ]; then
  say "pgvector is already installed for PostgreSQL $major"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  say "pgvector is missing for PostgreSQL $major and cannot be installed here (needs root and apt-get)"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }

# 1. A binary package, where this Debian has one.
candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" { print $2 }'; }
# Package lists that do not even know the server's own package were never fetched.
if [ -z "$(candidate "postgresql-$major")" ]; then
  apt-get update -qq
fi
candidate_version="$(candidate "postgresql-$major-pgvector")"
if [ -n "$candidate_version" ]; then
  say "installing postgresql-$major-pgvector $candidate_version"
  apt_install "postgresql-$major-pgvector"
  exit 0
fi

# 2. Build the source package of $suite. The mirror: the first Debian archive URI of the
# machine's sources whose suite is this release's codename (deb822 .sources or one-line lists).
codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
deb822_uris() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v want="$codename" '
      function flush() {
        if (uri != "" && types ~ / deb( |$)/ && suites ~ (" " want " ")) print uri
        uri = ""; suites = ""; types = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:" { $1 = ""; types = $0 " " }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 " " }
      END { flush() }
    ' "$file"
  done
}
one_line_uris() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    sed -e 's/\[[^]]*\]//' "$file" | awk -v want="$codename" '$1 == "deb" && $3 == want { print $2 }'
  done
}
mirror="$({ deb822_uris; one_line_uris; } | awk 'NR == 1')"
if [ -z "$mirror" ]; then
  say "no Debian archive for '$codename' in the machine's apt sources to fetch the $suite source package from"
  exit 1
fi

say "building pgvector from the $suite source package against PostgreSQL $major"
apt_install "postgresql-server-dev-$major" build-essential dpkg-dev

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/parts"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb-src [signed-by=$keyring] $mirror $suite main" >"$work/sources.list"
private=(
  -o "Dir::Etc::sourcelist=$work/sources.list"
  -o "Dir::Etc::sourceparts=$work/parts"
  -o "Dir::State=$work/state"
  -o "Dir::State::status=/var/lib/dpkg/status"
  -o "Dir::Cache=$work/cache"
  -o "APT::Sandbox::User=root"
)
apt-get "${private[@]}" update -qq
(cd "$work" && apt-get "${private[@]}" source -qq pgvector >/dev/null)
source_dir="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
if [ -z "$source_dir" ]; then
  say "apt-get source pgvector gave no source tree"
  exit 1
fi
make -C "$source_dir" -s -j"$(nproc)" OPTFLAGS="" PG_CONFIG="$pg_config_bin" >/dev/null
make -C "$source_dir" -s install OPTFLAGS="" PG_CONFIG="$pg_config_bin" >/dev/null
test -f "$extension_dir/vector.control"
say "installed pgvector $(basename "$source_dir" | sed 's/^pgvector-//') for PostgreSQL $major"
