#!/usr/bin/env bash
# Serve web/dist/ (scripts/build-web.sh builds it, and is run first when it is missing) on
# http://127.0.0.1:PORT/ for a person to try in a browser (PORT: first argument, default 8080).
# The shared sample models are served under /models/ when ../shared (or $SKINVIEW_SHARED) is
# there: http://127.0.0.1:8080/?model=/models/CesiumMan/CesiumMan.glb
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
port="${1:-8080}"
[ -f "$here/web/dist/index.html" ] || "$here/scripts/build-web.sh"
exec node "$here/tests/web/serve.mjs" "$port"
