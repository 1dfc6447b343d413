package policy

import (
	"encoding/json"
	"testing"
)

// Bash evaluates a variable's value as arithmetic wherever it evaluates an
// expression, and an array subscript inside that value runs its command
// substitution: x='a[$(touch p)]'; echo $((x)) runs touch. The same holds
// for ${!x}, ${x@P}, [[ -v ]], [[ -eq ]], unset 'a[x]' and declare -n/-i.
// None of these may be approved by a rule for the visible program.
func TestEvaluatedVariablesAreNotApprovable(t *testing.T) {
	rules, err := parseRules("allow", []string{"run_command(npm test:*)", "run_command(ls)"})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(cmd string) bool {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return commandAllowed(rules, in)
	}
	for _, cmd := range []string{
		"x='a[$(touch p)]'; npm test $((x))",
		"x='a[$(touch p)]'; npm test $[x]",
		"x='a[$(touch p)]'; npm test $(( $x + 1 ))",
		"x='$(touch p)'; npm test ${x@P}",
		"x='a[$(touch p)]'; npm test ${y[x]}",
		"x='a[$(touch p)]'; npm test \"${y[$x]}\"",
		"x='a[$(touch p)]'; npm test ${y:x}",
		"x='a[$(touch p)]'; npm test \"${y:0:x}\"",
		"x='a[$(touch p)]'; npm test ${!x}",
		"x='a[$(touch p)]'; [[ $x -eq 1 ]]; npm test",
		"x='a[$(touch p)]'; [[ -v y[x] ]] && npm test",
		"x='a[$(touch p)]'; cd $((x))",
		"x='a[$(touch p)]'; exit $((x))",
		"x='a[$(touch p)]'; y[x]=1; npm test",
		"x='a[$(touch p)]'; y=([x]=1); npm test",
		"x='a[$(touch p)]'; export y[x]=1; npm test",
		"declare -i y; x='a[$(touch p)]'; y=x; npm test",
		"declare -n r='y[x]'; npm test $r",
		"x='a[$(touch p)]'; unset 'y[x]'; npm test",
		"x='a[$(touch p)]'; wait -p 'y[x]'; ls",
		"npm test <& /dev/tcp/127.0.0.1/80",
	} {
		if allowed(cmd) {
			t.Errorf("approved by npm test:* / ls: %q", cmd)
		}
	}
	// Arithmetic on numbers, literal subscripts and plain tests stay approvable.
	for _, cmd := range []string{
		"npm test $((1+2))",
		"npm test ${y[0]} ${y[@]} ${#y[*]}",
		"npm test ${y:1:2}",
		"[[ 1 -eq 1 ]] && npm test",
		"[[ -f package.json ]] && npm test",
		"unset CI; npm test",
		"npm test <&0",
	} {
		if !allowed(cmd) {
			t.Errorf("not approved by npm test:*: %q", cmd)
		}
	}
}
