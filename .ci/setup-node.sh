#!/usr/bin/env bash
# The TypeScript peers' libraries (docs/other-languages.md): bridges/node at the exact versions of
# its package-lock.json, from the npm registry (the npm cache first). Without it their tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --prefix bridges/node --prefer-offline --no-audit --no-fund
