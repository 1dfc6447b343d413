#!/usr/bin/env python3
"""premat.py SET.jsonl CACHE: materialise row trees into the checkout.py cache, skipping blobs the mirror lacks
(gohugoio/hugo's snapshot has no large .wasm blobs; the runtime skips binaries anyway)."""
import json, os, subprocess, sys
sys.path.insert(0, os.environ.get("LOCALIZE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/bench/localize")))
import checkout
cache = sys.argv[2]
for line in open(sys.argv[1]):
    row = json.loads(line)
    dest = checkout.tree_dir(row, cache)
    if os.path.isfile(dest + ".ok"):
        continue
    git = checkout.mirror_of(row)
    ents = checkout._ls_tree(git, row["parent"])
    cat = subprocess.Popen(["git", "-C", git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    tmp = dest + ".tmp-pre"
    skipped = 0
    for mode, kind, sha, path in ents:
        if kind != "blob":
            continue
        cat.stdin.write(sha.encode() + b"\n"); cat.stdin.flush()
        hdr = cat.stdout.readline().split()
        if hdr[-1] == b"missing":
            skipped += 1
            continue
        data = cat.stdout.read(int(hdr[2])); cat.stdout.read(1)
        full = os.path.join(tmp, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), full)
        else:
            with open(full, "wb") as f:
                f.write(data)
            if mode == "100755":
                os.chmod(full, 0o755)
    cat.stdin.close(); cat.wait()
    os.rename(tmp, dest)
    with open(dest + ".ok", "w") as f:
        f.write(json.dumps({"repo": row["repo"], "parent": row["parent"], "skippedMissing": skipped}) + "\n")
    print(row["repo"], row["parent"][:10], "skipped", skipped, file=sys.stderr)
