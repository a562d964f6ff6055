#!/usr/bin/env bash
# The Debian packages the tests start for real: chromium (the page tests drive it headless with
# Playwright; Playwright's own browser download cannot work offline) and the PostgreSQL server
# binaries (initdb, pg_ctl: the stress tests start a throw-away server as the postgres user),
# and a JDK with Maven (.ci/run builds bridges/java: the JVM peers and the JDBC stress harness),
# and a C compiler (`bench check --compare` builds benchmarks/trigger_bfs.c, the explorer's C
# ceiling, whose ratio the speed guard judges).
# The Python side comes from the README's test command (extras browser, stores, ...).
# Idempotent and quiet; exits 0 when both are already present.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    missing+=(postgresql)
fi
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
exit 0
