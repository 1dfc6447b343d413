package main

import "testing"

func TestMemProfileFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--memprofile", "f"}, true},
		{[]string{"-memprofile", "f"}, true},
		{[]string{"--memprofile=f"}, true},
		{[]string{"-memprofile=f"}, true},
		{[]string{"--mcp-server", "--memprofile", "f"}, true},
		{[]string{"--cpuprofile", "memprofile"}, false},
		{[]string{"--", "--memprofile"}, false},
		{[]string{"--memprofiles"}, false},
	} {
		if got := memProfileFlag(c.args); got != c.want {
			t.Errorf("memProfileFlag(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
