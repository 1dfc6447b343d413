#!/bin/sh
# bench/edits.sh [-edits N] [-size BYTES]: measures the edit log through the
# runtime (see bench/editbench): per-edit latency of one-line replace_text
# edits of one large file and the checkpoint size after them. Defaults: 100
# edits of a 300 KB file. Downloads nothing and installs nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT INT TERM
(cd "$here/.." && go build -o "$bin/" ./cmd/task-x-runtime ./bench/editbench)
"$bin/editbench" -runtime "$bin/task-x-runtime" "$@"
