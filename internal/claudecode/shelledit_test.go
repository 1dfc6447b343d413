package claudecode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestShellEditBlocked(t *testing.T) {
	blocked := []string{
		// sed -i in every spelling and position.
		`sed -i 's/a/b/' f.go`,
		`sed -i.bak 's/a/b/' f.go`,
		`sed --in-place 's/a/b/' f.go`,
		`sed -ni 's/a/b/p' f.go`,
		`sed -E -i 's/a/b/' f.go`,
		`true && sed -i 's/a/b/' f.go`,
		`go build ./... || sed -i 's/a/b/' f.go`,
		`ls; sed -i s/a/b/ f.go`,
		`FOO=1 sed -i s/a/b/ f.go`,
		`ls *.go | xargs sed -i 's/a/b/'`,
		`ls | xargs -n 1 sed -i 's/a/b/'`,
		`echo $(sed -i 's/a/b/' f.go)`,
		"echo `sed -i s/a/b/ f.go`",
		`x=$(sed -i s/a/b/ f.go)`,
		`cat <(sed -i s/a/b/ f.go)`,
		`(cd sub && sed -i s/a/b/ f.go)`,
		`{ sed -i s/a/b/ f.go; }`,
		`if true; then sed -i s/a/b/ f.go; fi`,
		`for f in *.go; do sed -i s/a/b/ "$f"; done`,
		`bash -c "sed -i 's/a/b/' f.go"`,
		`sh -c 'true && sed -i s/a/b/ f.go'`,
		`eval "sed -i s/a/b/ f.go"`,
		`find . -name '*.go' -exec sed -i 's/a/b/' {} \;`,
		`env LC_ALL=C sed -i s/a/b/ f.go`,
		`timeout 5 sed -i s/a/b/ f.go`,
		`/usr/bin/sed -i s/a/b/ f.go`,
		// perl / ruby in place.
		`perl -i -pe 's/a/b/' f.go`,
		`perl -pi -e 's/a/b/' f.go`,
		`perl -pi.bak -e 's/a/b/' f.go`,
		`ruby -i -pe 'gsub(/a/, "b")' f.go`,
		// tee.
		`echo hi | tee f.go`,
		`echo hi | tee -a f.go`,
		`go test ./... 2>&1 | tee out.log | tail -5`,
		// redirections.
		`cat > f.go <<'EOF'
package main
EOF`,
		`cat <<EOF > f.go
package main
EOF`,
		`echo hi > f.go`,
		`echo hi >> f.go`,
		`echo hi >| f.go`,
		`make &> build.log`,
		`make >& build.log`,
		`true && echo x > f.go`,
		`echo $(echo x > f.go)`,
		`ls | cat > list.txt`,
		`echo x > /tmp/../work/f.go`,
		`echo x > "$OUT"`,
		`bash -c 'echo x > f.go'`,
		`bash <<'EOF'
echo x > f.go
EOF`,
		`dd if=/dev/zero of=f.bin bs=1 count=1`,
		`truncate -s 0 f.go`,
		`find . -name '*.orig' -delete`,
		// inline scripts that write.
		`python3 -c "open('f.go','w').write('x')"`,
		`python3 -c 'import pathlib; pathlib.Path("f.go").write_text("x")'`,
		`python -c "import shutil; shutil.copy('a','b')"`,
		`python3 -c "import os; os.remove('f.go')"`,
		`python3 - <<'EOF'
with open("f.go", "w") as f:
    f.write("x")
EOF`,
		`python3 <<EOF
import pathlib
pathlib.Path("f.go").write_text("x")
EOF`,
		`node -e "require('fs').writeFileSync('f.go', 'x')"`,
		`node -e 'fs.promises.writeFile("f.go","x")'`,
		`node <<'EOF'
require("fs").appendFileSync("f.go", "x")
EOF`,
		`perl -e 'open(my $f, ">", "f.go"); print $f "x"'`,
		`perl -e 'unlink "f.go"'`,
		`ruby -e 'File.write("f.go", "x")'`,
		`php -r 'file_put_contents("f.go", "x");'`,
		`true && python3 -c "open('f.go','a').write('x')"`,
		`echo $(node -e "require('fs').rmSync('f.go')")`,
		// not parseable: blocked.
		`echo "unterminated`,
	}
	for _, cmd := range blocked {
		if ShellEditReason(cmd) == "" {
			t.Errorf("not blocked: %s", cmd)
		}
	}
}

func TestShellEditAllowed(t *testing.T) {
	allowed := []string{
		`ls -la`,
		`go test ./...`,
		`go build ./... && go vet ./...`,
		`sed 's/a/b/' f.go`,
		`sed -n '1,20p' f.go`,
		`sed -e 's/i/j/' f.go`,
		`sed -f script.sed f.go | head`,
		`grep -rn foo . | head -20`,
		`cat f.go`,
		`cat <<EOF
hello
EOF`,
		`perl -ne 'print if /x/' f.go`,
		`perl -e 'print "hi\n"'`,
		`echo hi > /dev/null`,
		`make 2>/dev/null`,
		`make 2>&1 | tail`,
		`go test ./... > /tmp/out.txt 2>&1`,
		`echo x | tee /dev/null`,
		`echo x | tee`,
		`find . -name '*.go' -exec grep -l foo {} \;`,
		`ls | xargs wc -l`,
		`git status && git diff`,
		`echo $(git rev-parse HEAD)`,
		`bash -c 'go test ./...'`,
		`python3 -c "import json,sys; print(json.load(open('package.json'))['name'])"`,
		`python3 -c 'print(open("f.go").read())'`,
		`python3 script.py -c x`,
		`python3 - <<'EOF'
import json
print(json.load(open("package.json")))
EOF`,
		`node -e "console.log(require('fs').readFileSync('f.go','utf8').length)"`,
		`node -p 'process.version'`,
		`ruby -e 'puts File.read("f.go")'`,
		`dd if=f.bin of=/dev/null`,
		`sort < input.txt`,
		`exec 3>&1`,
	}
	for _, cmd := range allowed {
		if r := ShellEditReason(cmd); r != "" {
			t.Errorf("blocked %s: %s", cmd, r)
		}
	}
}

func hookRun(t *testing.T, in string) (int, map[string]any, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Hook(strings.NewReader(in), &out, &errOut, false)
	var v map[string]any
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("hook stdout is not JSON: %q", out.String())
		}
	}
	return code, v, errOut.String()
}

func hookEvent(tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"})
	return string(b)
}

func TestHookDecisions(t *testing.T) {
	deny := func(v map[string]any) string {
		h, _ := v["hookSpecificOutput"].(map[string]any)
		if h == nil || h["permissionDecision"] != "deny" || h["hookEventName"] != "PreToolUse" {
			return ""
		}
		r, _ := h["permissionDecisionReason"].(string)
		return r
	}
	code, v, _ := hookRun(t, hookEvent("Bash", map[string]any{"command": "true && sed -i s/a/b/ f.go"}))
	if code != 0 || !strings.Contains(deny(v), "sed -i") {
		t.Errorf("sed -i: code %d out %v", code, v)
	}
	code, v, _ = hookRun(t, hookEvent("Bash", map[string]any{"command": "ls", "dangerouslyDisableSandbox": true}))
	if code != 0 || deny(v) != DisableSandboxReason {
		t.Errorf("dangerouslyDisableSandbox: code %d out %v", code, v)
	}
	code, v, _ = hookRun(t, hookEvent("Bash", map[string]any{"command": "go test ./..."}))
	if code != 0 || v != nil {
		t.Errorf("go test: code %d out %v", code, v)
	}
	code, v, _ = hookRun(t, hookEvent("mcp__task-x__read_file", map[string]any{"path": "f.go"}))
	if code != 0 || v != nil {
		t.Errorf("other tool: code %d out %v", code, v)
	}
	code, _, errOut := hookRun(t, "not json")
	if code != 2 || errOut == "" {
		t.Errorf("bad input: code %d stderr %q (want 2, a reason)", code, errOut)
	}
}
