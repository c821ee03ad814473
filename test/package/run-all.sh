#!/usr/bin/env bash
# Every check of the packed package (see docs/contributing.md). Uses the npm registry once to fill
# build/package-tools.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash test/package/pack-install.sh
bash test/package/types.sh
bash test/package/node-versions.sh "$@"
