package doctor

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// helmfileEnvReleasesErr is the error helmfile v1 stops with (helmfile
// pkg/policy, ErrEnvironmentsAndReleasesWithinSameYamlPart).
const helmfileEnvReleasesErr = "environments and releases cannot be defined within the same YAML part. Use --- to extract the environments into a dedicated part"

var (
	// helmfile's own policy detects top-level keys line by line.
	topKeyRe    = regexp.MustCompile(`^([a-zA-Z]+):`)
	separatorRe = regexp.MustCompile(`^---\s*$`)
	valuesRefRe = regexp.MustCompile(`^\s*-\s*["']?([^"'\s{}]+\.ya?ml)["']?\s*$`)
)

// isHelmfileState reports whether rel is a helmfile state file.
func isHelmfileState(rel string) bool {
	base := path.Base(rel)
	switch base {
	case "helmfile.yaml", "helmfile.yml", "helmfile.yaml.gotmpl", "helmfile.yml.gotmpl":
		return true
	}
	if strings.Contains("/"+path.Dir(rel)+"/", "/helmfile.d/") {
		return isYAML(rel) || strings.HasSuffix(rel, ".yaml.gotmpl") || strings.HasSuffix(rel, ".yml.gotmpl")
	}
	return false
}

// templateLines returns the 1-based numbers of the lines outside comments
// that contain a template action.
func templateLines(data []byte) []int {
	var out []int
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.Contains(line, "{{") {
			out = append(out, i+1)
		}
	}
	return out
}

// checkHelmfileV1 finds the two helmfile v1 breaking changes operators hit
// (field notes, pitfall 4): environments and releases in one YAML part, and
// templates in files not named *.gotmpl.
func checkHelmfileV1(_ context.Context, env *Env) Result {
	if env.RepoDir == "" {
		return skip(noRepo)
	}
	if err := checkRepoDir(env.RepoDir); err != nil {
		return repoError(err)
	}
	var (
		files, mixed, templ, valuesTempl []string
	)
	err := walkRepo(env.RepoDir, func(rel string, data []byte) error {
		if !isHelmfileState(rel) {
			return nil
		}
		files = append(files, rel)
		part, start := map[string]bool{}, 1
		flush := func(end int) {
			if part["environments"] && part["releases"] {
				mixed = append(mixed, fmt.Sprintf("%s lines %d-%d: environments and releases in the same YAML document", rel, start, end))
			}
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		for i, line := range lines {
			if separatorRe.MatchString(line) {
				flush(i)
				part, start = map[string]bool{}, i+2
				continue
			}
			if m := topKeyRe.FindStringSubmatch(line); m != nil {
				part[m[1]] = true
			}
			if m := valuesRefRe.FindStringSubmatch(line); m != nil {
				ref := path.Join(path.Dir(rel), m[1])
				if b, err := os.ReadFile(joinRepo(env.RepoDir, ref)); err == nil {
					if tl := templateLines(b); len(tl) > 0 {
						valuesTempl = append(valuesTempl, fmt.Sprintf("%s (used by %s): template braces on line(s) %s, but only *.gotmpl values files are rendered", ref, rel, intsList(tl)))
					}
				}
			}
		}
		flush(len(lines))
		if !strings.HasSuffix(rel, ".gotmpl") {
			if tl := templateLines(data); len(tl) > 0 {
				templ = append(templ, fmt.Sprintf("%s: template braces `{{` on line(s) %s, but the file is not named *.gotmpl", rel, intsList(tl)))
			}
		}
		return nil
	})
	if err != nil {
		return repoError(fmt.Errorf("read helmfiles in %s: %w", env.RepoDir, err))
	}
	if len(files) == 0 {
		return skip("no helmfile.yaml in the repository")
	}
	evidence := []string{"helmfiles: " + strings.Join(files, ", ")}
	var why, fix []string
	if len(mixed) > 0 {
		why = append(why, fmt.Sprintf("helmfile v1 refuses a YAML document that defines both environments and releases: it stops with %q. "+
			"It renders helmfile.yaml in two passes, environments first, so they must live in their own document.", helmfileEnvReleasesErr))
		fix = append(fix, "move `environments:` (with `bases:` before it) into the first document and start the releases with a `---` line")
	}
	if len(templ) > 0 {
		why = append(why, "helmfile v1 only renders Go templates in files named *.gotmpl (helmfile.yaml.gotmpl); elsewhere the YAML parser meets the braces "+
			"and stops (`bad character U+007B '{'`, or `unexpected mapping key` / `could not find flow map content` depending on where they sit).")
		fix = append(fix, "rename the file to *.yaml.gotmpl (e.g. helmfile.yaml.gotmpl) and update references to it")
	}
	if len(mixed)+len(templ) > 0 {
		return Result{Status: StatusFail, Evidence: append(append(append(mixed, templ...), valuesTempl...), evidence...),
			Explanation: strings.Join(why, " "), Fix: strings.Join(fix, "; ")}
	}
	if len(valuesTempl) > 0 {
		return Result{Status: StatusWarn, Evidence: append(valuesTempl, evidence...),
			Explanation: "these values files contain template braces but are not named *.gotmpl: helmfile v1 passes them to Helm unrendered, so the chart receives the literal `{{ ... }}` text",
			Fix:         "rename them to *.yaml.gotmpl and update the references in the helmfile"}
	}
	return pass(evidence...)
}

func joinRepo(dir, rel string) string {
	return dir + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

func intsList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
