#!/usr/bin/env bash
# Installs the public MCP servers of the census (scripts/census) from the pinned files in this
# folder, and nothing else:
#   package.json + package-lock.json -> node_modules     (npm ci)
#   requirements.txt                 -> .venv            (servers on the mcp 2.x Python SDK)
#   requirements-mcp1.txt            -> .venv-mcp1       (servers that still need mcp 1.x)
# Two Python environments because mcp-server-git needs mcp>=2.3 while mcp-server-sqlite and
# sqlite-mcp-server use APIs that mcp 2 removed.
#
#   census/install.sh --regression
# installs only the two servers of the regression tests (checker/tests/census.rs), from the pins
# in regression/: server-memory (regression/package-lock.json, a subset of the census lock ->
# regression/node_modules) and mcp-server-sqlite with mcp 1.x (regression/requirements.txt ->
# regression/.venv). About 90 MB and a minute on a fresh machine.
#
# Re-running is cheap: each part records the hash of its pin files (and of the interpreter)
# in a stamp inside what it installed, and is skipped while the stamp still matches.
# Needs node >= 20 with npm, python3 >= 3.10 with venv, sha256sum; the npm registry and PyPI.
set -euo pipefail

CENSUS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STAMP=.census-install-stamp

log() { echo "census/install.sh: $*"; }
fail() {
    echo "census/install.sh: ERROR: $*" >&2
    exit 1
}
step() {
    log "\$ $*"
    "$@" || fail "exit $? from: $*"
}
trap 'echo "census/install.sh: ERROR: stopped at line $LINENO" >&2' ERR

REGRESSION=
case ${1:-} in
"") ;;
--regression) REGRESSION=1 ;;
*) fail "usage: install.sh [--regression]" ;;
esac

for need in node npm python3 sha256sum; do
    command -v "$need" >/dev/null || fail "$need is not on PATH"
done
(($(node -p 'process.versions.node.split(".")[0]') >= 20)) || fail "node >= 20 is needed, this is $(node --version)"
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    fail "python3 >= 3.10 is needed, this is $(python3 --version 2>&1)"
python3 -c 'import ensurepip, venv' 2>/dev/null || fail "python3 cannot make a venv (Debian: apt-get install python3-venv)"

# hash_of FILE...: one hash over the files and the python3 that builds the venvs.
hash_of() {
    { cat "$@"; python3 -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

# --- npm servers ----------------------------------------------------------------------------
# npm_install DIR ENTRY...: `npm ci` in DIR unless its stamp matches; then each ENTRY (a path
# under DIR/node_modules) must exist.
npm_install() {
    local dir=$1 want stamp entry rel
    shift
    rel=${dir#"$CENSUS"}
    rel=${rel#/}
    rel=${rel:+$rel/}
    want=$(hash_of "$dir/package.json" "$dir/package-lock.json")
    stamp=$dir/node_modules/$STAMP
    if [[ -f $stamp && $(<"$stamp") == "$want" ]]; then
        log "npm: ${rel}node_modules is up to date"
    else
        log "npm: installing from ${rel}package-lock.json"
        (cd "$dir" && step npm ci --no-audit --no-fund --loglevel=error)
        echo "$want" >"$stamp"
    fi
    for entry in "$@"; do
        [[ -f $dir/node_modules/$entry ]] || fail "npm: ${rel}node_modules/$entry is missing after the install"
    done
}

# --- Python servers -------------------------------------------------------------------------
# make_venv DIR REQUIREMENTS: (re)create DIR from REQUIREMENTS unless its stamp matches.
make_venv() {
    local dir=$1 reqs=$2 want stamp
    want=$(hash_of "$reqs")
    stamp=$dir/$STAMP
    if [[ -f $stamp && $(<"$stamp") == "$want" && -x $dir/bin/python ]]; then
        log "python: ${dir#"$CENSUS"/} is up to date"
        return
    fi
    [[ ! -e $dir ]] || step rm -rf "$dir"
    step python3 -m venv "$dir"
    step "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$reqs"
    step "$dir/bin/python" -m pip check --disable-pip-version-check
    echo "$want" >"$stamp"
}

# --- what to install ------------------------------------------------------------------------
if [[ -n $REGRESSION ]]; then
    npm_install "$CENSUS/regression" @modelcontextprotocol/server-memory/dist/index.js
    make_venv "$CENSUS/regression/.venv" "$CENSUS/regression/requirements.txt"
    [[ -x $CENSUS/regression/.venv/bin/mcp-server-sqlite ]] ||
        fail "python: regression/.venv/bin/mcp-server-sqlite is missing after the install"
    log "ready (regression servers)"
    exit 0
fi

npm_install "$CENSUS" @modelcontextprotocol/server-memory/dist/index.js @modelcontextprotocol/server-filesystem/dist/index.js \
    @kazuph/mcp-taskmanager/dist/index.js @cyanheads/git-mcp-server/dist/index.js \
    @agent-infra/mcp-server-filesystem/dist/index.cjs supergateway/dist/index.js
make_venv "$CENSUS/.venv" "$CENSUS/requirements.txt"
make_venv "$CENSUS/.venv-mcp1" "$CENSUS/requirements-mcp1.txt"
for exe in .venv/bin/mcp-server-git .venv/bin/mcp-server-motherduck .venv-mcp1/bin/mcp-server-sqlite \
    .venv-mcp1/bin/sqlite-mcp-server; do
    [[ -x $CENSUS/$exe ]] || fail "python: $exe is missing after the install"
done
"$CENSUS/.venv/bin/python" -c 'import duckdb' || fail "python: duckdb is not importable from .venv"
log "ready"
