# Sourced by the scripts: the one cargo profile the tests and scripts build and run with, and
# where its binaries are. `release` (Cargo.toml) has overflow checks and debug assertions on in
# mcp-once's own crates, so that a wrapped u8 counter or a broken invariant fails a test instead
# of passing silently. MCP_ONCE_PROFILE=NAME builds and runs another profile.
profile=${MCP_ONCE_PROFILE:-release}
case $profile in
dev) profile_dir=debug ;;
*) profile_dir=$profile ;;
esac
bin_dir="${CARGO_TARGET_DIR:-target}/$profile_dir"

# The mcp-once binary of that profile, built first if it is missing or stale; MCP_ONCE_BIN=PATH
# runs that binary instead (a copy, so a long run is not disturbed by a rebuild).
mcp_once_bin() {
    if [[ -n ${MCP_ONCE_BIN:-} ]]; then
        echo "$MCP_ONCE_BIN"
        return
    fi
    cargo build --profile "$profile" --locked -q -p mcp-once --bin mcp-once >&2
    echo "$bin_dir/mcp-once"
}
