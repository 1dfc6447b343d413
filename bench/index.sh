#!/bin/sh
# bench/index.sh DIR [DIR...]: measures the workspace index of task-x-runtime
# on each folder against ctags, git status and rg (see bench/indexbench):
# cold open, reopen from the saved index, reopen after touching 1% of the
# files (their modification times are put back), refresh (and the size of
# its ready notification), retrieve p50 and peak RSS, each with its ratio
# and goal, and the load average at the start and end; every file is read
# once first, so all runs find the tree in the page cache. Several folders
# (e.g. a git-initialised copy of $(go env GOROOT)/src and a mixed tree)
# are measured one after the other. INDEXBENCH_FLAGS adds flags (e.g.
# -scale=false skips the x1/x2/x4 copies). Downloads nothing and installs
# nothing. The peak RSS counts the binary's file pages, printed apart.
set -eu
if [ $# -lt 1 ]; then
	echo "usage: bench/index.sh DIR [DIR...]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT INT TERM
(cd "$here/.." && go build -o "$bin/build/" ./cmd/task-x-runtime ./bench/indexbench)
# The runtime runs from a copy, as an installed binary would: the pages the
# linker has just written stay in the page cache in larger blocks, and a
# process running that file maps ~2.5 MB more of it (peak RSS, mixed tree:
# file pages 23.7 against 21.1 MB for a copy or for the same file once
# written back and read again; docs/index.md "Memory: eleventh pass").
cp "$bin/build/task-x-runtime" "$bin/build/indexbench" "$bin/"
ctags=""
if command -v ctags >/dev/null 2>&1 && ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
	ctags=$(command -v ctags)
else
	echo "note: universal-ctags is missing; install it with: sudo apt-get install universal-ctags" >&2
fi
rg=""
if command -v rg >/dev/null 2>&1; then
	rg=$(command -v rg)
else
	echo "note: ripgrep is missing; install it with: sudo apt-get install ripgrep" >&2
fi
for dir in "$@"; do
	# shellcheck disable=SC2086
	"$bin/indexbench" -runtime "$bin/task-x-runtime" -ctags "$ctags" -rg "$rg" ${INDEXBENCH_FLAGS:-} "$dir"
	echo
done
