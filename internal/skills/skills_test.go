package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixture(t *testing.T) (root, home string) {
	root, home = t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".task-x/skills/deploy/SKILL.md"), `---
name: deploy
description: Deploy the service
triggers: [deploy, "ship it"]
params:
  - env
  - name: region
    default: eu-west-1
---
Deploy to {{env}} in {{ region }}. Args: {{args}}. Keep {{unknown}}.
`)
	write(t, filepath.Join(root, ".claude/skills/terraform/SKILL.md"), "---\r\nname: terraform\r\ndescription: Terraform rules\r\npaths: [\"**/*.tf\", infra/**]\r\n---\r\nUse tflint.\r\n")
	// Same name as the workspace skill: the workspace wins.
	write(t, filepath.Join(home, ".task-x/skills/deploy/SKILL.md"), "---\nname: deploy\ndescription: user deploy\n---\nuser text\n")
	write(t, filepath.Join(home, ".task-x/skills/review/SKILL.md"), "---\ndescription: Review checklist\ntriggers: c++\nparams: {focus: what to look at}\n---\nFocus on {{focus}}.\n")
	write(t, filepath.Join(home, ".task-x/skills/broken/SKILL.md"), "no front matter\n")
	write(t, filepath.Join(home, ".task-x/skills/badyaml/SKILL.md"), "---\nname: [\n---\nx\n")
	return root, home
}

func TestLoadPrecedenceAndErrors(t *testing.T) {
	root, home := fixture(t)
	set := Load(root, home)
	var names []string
	for _, sk := range set.Skills {
		names = append(names, sk.Name+":"+sk.Source)
	}
	if got := strings.Join(names, ","); got != "deploy:workspace,terraform:workspace,review:user" {
		t.Fatalf("skills = %s", got)
	}
	if d := set.Get("deploy"); d.Description != "Deploy the service" || d.Path != ".task-x/skills/deploy/SKILL.md" ||
		len(d.Params) != 2 || d.Params[1].Default != "eu-west-1" {
		t.Fatalf("deploy = %+v", d)
	}
	if r := set.Get("review"); r.Name != "review" || r.Params[0].Description != "what to look at" || r.Triggers[0] != "c++" {
		t.Fatalf("review (name from the folder) = %+v", r)
	}
	if len(set.Errors) != 2 {
		t.Fatalf("errors = %+v", set.Errors)
	}
	for _, e := range set.Errors {
		if !filepath.IsAbs(e.Path) || e.Message == "" {
			t.Errorf("error = %+v", e)
		}
	}
}

func TestResolveSlashCommand(t *testing.T) {
	set := Load(fixture(t))
	act := set.Resolve("/deploy staging", nil)
	if len(act) != 1 || act[0].Reason != "command /deploy" ||
		act[0].Text != "Deploy to staging in eu-west-1. Args: staging. Keep {{unknown}}." {
		t.Fatalf("positional: %+v", act)
	}
	act = set.Resolve(`  /DEPLOY region="us east" env=prod`, nil)
	if len(act) != 1 || !strings.HasPrefix(act[0].Text, "Deploy to prod in us east.") {
		t.Fatalf("key=value: %+v", act)
	}
	// The last positional param takes the rest of the line.
	act = set.Resolve("/review error handling and tests", nil)
	if len(act) != 1 || act[0].Text != "Focus on error handling and tests." || act[0].Source != SourceUser {
		t.Fatalf("rest of line: %+v", act)
	}
	if act := set.Resolve("/nosuch thing", nil); len(act) != 0 {
		t.Fatalf("unknown command: %+v", act)
	}
	if act := set.Resolve("please /deploy", nil); len(act) != 1 || act[0].Reason != `trigger "deploy"` {
		t.Fatalf("not leading, so a trigger: %+v", act)
	}
}

func TestResolveTriggers(t *testing.T) {
	set := Load(fixture(t))
	cases := map[string]string{
		"Please DEPLOY the app":        "deploy",
		"ok, Ship It now":              "deploy",
		"redeployment is not the word": "",
		"deployed":                     "",
		"review this c++ code":         "review",
		"c++":                          "review",
		"abc++ is not c++x":            "",
	}
	for prompt, want := range cases {
		act := set.Resolve(prompt, nil)
		got := ""
		if len(act) > 0 {
			got = act[0].Name
		}
		if got != want || len(act) > 1 {
			t.Errorf("%q → %+v, want %q", prompt, act, want)
		}
	}
}

func TestResolvePaths(t *testing.T) {
	set := Load(fixture(t))
	act := set.Resolve("change the bucket", []string{"src/main.go", "infra/s3/bucket.tf"})
	if len(act) != 1 || act[0].Name != "terraform" || act[0].Reason != `path "infra/s3/bucket.tf" matches "**/*.tf"` || act[0].Text != "Use tflint." {
		t.Fatalf("%+v", act)
	}
	// Several reasons for one skill: it is listed once, the command first.
	act = set.Resolve("/deploy prod then deploy again", []string{"infra/x"})
	if len(act) != 2 || act[0].Name != "deploy" || act[0].Reason != "command /deploy" || act[1].Name != "terraform" {
		t.Fatalf("%+v", act)
	}
	if b := Block(act); !strings.Contains(b, `<skill name="deploy" source="workspace" reason="command /deploy">`) {
		t.Fatalf("block = %s", b)
	}
	if Block(nil) != "" {
		t.Fatal("empty block")
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		"---\nname: has space\n---\n",
		"---\nname: x\npaths: ['[']\n---\n",
		"---\nname: x\nparams: [\"1bad\"]\n---\n",
		"---\nname: x\nparams: [a, a]\n---\n",
		"---\nname: x\ntriggers: {a: b}\n---\n",
		"---\nname: x\n",
	}
	for _, s := range bad {
		if _, err := Parse([]byte(s), "dir"); err == nil {
			t.Errorf("Parse(%q) = nil error", s)
		}
	}
	var nilSet *Set
	if got := nilSet.Resolve("/x", nil); got == nil || len(got) != 0 {
		t.Fatal("nil set")
	}
}
