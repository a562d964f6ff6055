#!/usr/bin/env bash
# CI setup for issue 13 (turncheck stress --store postgres): the PostgreSQL server binaries
# (initdb, pg_ctl) the tests start a throw-away server from, and the psycopg driver (extra
# "stores"). Idempotent and quiet; exits 0 when everything is already present.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
if ! python -c "import psycopg" >/dev/null 2>&1; then
    pip install -q -c constraints.txt 'psycopg[binary]>=3.2,<4' >/dev/null
fi
exit 0
