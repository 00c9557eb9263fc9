#!/usr/bin/env bash
# Fetches the labelled captures of tests/real/labels.tsv that come from
# public repositories (zeek/, arkime/, ndpi/) at the commits the table
# names, into ../shared/captures beside this checkout (or DIR, or
# $TCPWHY_CAPTURES), each under its source's name and upstream path:
#
#   tests/real/fetch-captures.sh [DIR]
#
# The rows whose source is `shared` (ppa/, tcpdump-tests/) come from
# tests/fetch-captures.sh. Needs git and network access to github.com
# (GIT_BASE names another host holding the same owner/name repositories).
# Only the labelled files are downloaded; existing files are replaced.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-${TCPWHY_CAPTURES:-$here/../../../shared/captures}}
labels=$here/labels.tsv
GIT_BASE=${GIT_BASE:-https://github.com}

# Every "owner/name@commit" source but `shared`, once.
sources=$(awk -F'\t' 'NR > 1 && $2 != "shared" { print $2 }' "$labels" | sort -u)

for source in $sources; do
    repo=${source%@*}
    commit=${source#*@}
    mapfile -t captures < <(awk -F'\t' -v s="$source" 'NR > 1 && $2 == s { print $1 }' "$labels")
    prefix=${captures[0]%%/*}
    paths=("${captures[@]/#$prefix\//}")
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    git -C "$work" init -q
    git -C "$work" fetch -q --depth 1 --filter=blob:none "$GIT_BASE/$repo" "$commit"
    git -C "$work" checkout -q FETCH_HEAD -- "${paths[@]}"
    for path in "${paths[@]}"; do
        mkdir -p "$dest/$prefix/$(dirname "$path")"
        cp "$work/$path" "$dest/$prefix/$path"
    done
    rm -rf "$work"
    trap - EXIT
    echo "${#paths[@]} captures of $repo at ${commit:0:12} in $dest/$prefix"
done
