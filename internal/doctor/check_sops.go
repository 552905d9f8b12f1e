package doctor

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// sopsRule is one creation rule of a .sops.yaml.
type sopsRule struct {
	pathRegex string
	re        *regexp.Regexp
	age       []string
}

// sopsConfig is one .sops.yaml and the folder it governs.
type sopsConfig struct {
	dir   string // slash path relative to the repo, "." for the root
	file  string
	rules []sopsRule
}

var dotenvAgeRe = regexp.MustCompile(`(?m)^sops_age__list_\d+__map_recipient=(\S+)`)

func splitRecipients(v any) []string {
	list, ok := stringList(v)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range list {
		for _, r := range strings.Split(s, ",") {
			if r = strings.TrimSpace(r); r != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

func parseSopsConfig(rel string, data []byte) (sopsConfig, error) {
	cfg := sopsConfig{dir: path.Dir(rel), file: rel}
	docs, err := yamlDocs(data)
	if err != nil {
		return cfg, fmt.Errorf("parse %s: %w", rel, err)
	}
	if len(docs) == 0 || docs[0] == nil {
		return cfg, nil
	}
	rules, _ := docs[0]["creation_rules"].([]any)
	for i, r := range rules {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		rule := sopsRule{}
		if pr, ok := m["path_regex"]; ok {
			rule.pathRegex = fmt.Sprint(pr)
			re, err := regexp.Compile(rule.pathRegex)
			if err != nil {
				return cfg, fmt.Errorf("%s: creation rule %d: path_regex %q does not compile: %w", rel, i+1, rule.pathRegex, err)
			}
			rule.re = re
		}
		rule.age = splitRecipients(m["age"])
		if groups, ok := m["key_groups"].([]any); ok {
			for _, g := range groups {
				if gm, ok := g.(map[string]any); ok {
					rule.age = append(rule.age, splitRecipients(gm["age"])...)
				}
			}
		}
		cfg.rules = append(cfg.rules, rule)
	}
	return cfg, nil
}

// encryptedRecipients returns the age recipients of a SOPS-encrypted file and
// whether the file carries SOPS metadata at all.
func encryptedRecipients(rel string, data []byte) ([]string, bool) {
	if m := dotenvAgeRe.FindAllSubmatch(data, -1); len(m) > 0 {
		var out []string
		for _, x := range m {
			out = append(out, string(x[1]))
		}
		return out, true
	}
	if !strings.Contains(string(data), "sops") {
		return nil, false
	}
	l := strings.ToLower(rel)
	if !isYAML(rel) && !strings.HasSuffix(l, ".json") {
		return nil, false
	}
	docs, err := yamlDocs(data)
	if err != nil {
		return nil, false
	}
	for _, d := range docs {
		meta, ok := d["sops"].(map[string]any)
		if !ok {
			continue
		}
		var out []string
		if list, ok := meta["age"].([]any); ok {
			for _, e := range list {
				if em, ok := e.(map[string]any); ok {
					out = append(out, fmt.Sprint(em["recipient"]))
				}
			}
		}
		return out, true
	}
	return nil, false
}

func sameSet(a, b []string) bool {
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(uniq(x), ",") == strings.Join(uniq(y), ",")
}

// governing returns the nearest .sops.yaml above rel and rel relative to it.
func governing(cfgs []sopsConfig, rel string) (sopsConfig, string, bool) {
	best, bestLen := sopsConfig{}, -1
	for _, c := range cfgs {
		prefix := c.dir + "/"
		if c.dir == "." {
			prefix = ""
		}
		if strings.HasPrefix(rel, prefix) && len(prefix) > bestLen {
			best, bestLen = c, len(prefix)
		}
	}
	if bestLen < 0 {
		return sopsConfig{}, "", false
	}
	return best, rel[bestLen:], true
}

// checkSopsRules verifies that every SOPS-encrypted file in the repository is
// encrypted for the age recipients of the first creation rule matching its
// path (field notes, pitfall 5).
func checkSopsRules(_ context.Context, env *Env) Result {
	if env.RepoDir == "" {
		return skip(noRepo)
	}
	if err := checkRepoDir(env.RepoDir); err != nil {
		return repoError(err)
	}
	var cfgs []sopsConfig
	type encFile struct {
		rel        string
		recipients []string
	}
	var files []encFile
	var cfgErr error
	err := walkRepo(env.RepoDir, func(rel string, data []byte) error {
		if b := path.Base(rel); b == ".sops.yaml" || b == ".sops.yml" {
			c, err := parseSopsConfig(rel, data)
			if err != nil && cfgErr == nil {
				cfgErr = err
			}
			cfgs = append(cfgs, c)
			return nil
		}
		if r, ok := encryptedRecipients(rel, data); ok {
			files = append(files, encFile{rel, r})
		}
		return nil
	})
	if err != nil {
		return repoError(fmt.Errorf("read %s: %w", env.RepoDir, err))
	}
	if cfgErr != nil {
		return Result{Status: StatusFail, Evidence: []string{cfgErr.Error()},
			Explanation: "sops cannot use a .sops.yaml it cannot parse: every encryption in the repository fails or falls back to command-line keys",
			Fix:         "fix the .sops.yaml (sops -e on any file shows the same error)"}
	}
	if len(cfgs) == 0 && len(files) == 0 {
		return skip("no .sops.yaml and no SOPS-encrypted file in the repository")
	}
	var problems, evidence []string
	for _, f := range files {
		cfg, relToCfg, ok := governing(cfgs, f.rel)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: encrypted for %s, but no .sops.yaml governs it", f.rel, orNone(f.recipients)))
			continue
		}
		var rule *sopsRule
		for i := range cfg.rules {
			if cfg.rules[i].re == nil || cfg.rules[i].re.MatchString(relToCfg) {
				rule = &cfg.rules[i]
				break
			}
		}
		if rule == nil {
			problems = append(problems, fmt.Sprintf("%s: no creation rule of %s matches this path (encrypted for %s)", f.rel, cfg.file, orNone(f.recipients)))
			continue
		}
		if !sameSet(f.recipients, rule.age) {
			problems = append(problems, fmt.Sprintf("%s: encrypted for %s, but the first matching rule of %s (path_regex %q) wants %s",
				f.rel, orNone(f.recipients), cfg.file, rule.pathRegex, orNone(rule.age)))
			continue
		}
		evidence = append(evidence, fmt.Sprintf("%s: recipients match rule path_regex %q", f.rel, rule.pathRegex))
	}
	if len(problems) > 0 {
		return failed(problems, evidence,
			"sops picks the creation rule by matching path_regex against the INPUT path it is given, not the file the output is redirected to: "+
				"`sops -e workdir/kubeconfig > state/kubeconfig.enc.yaml` never matches a rule written for state/, so the file is encrypted for other keys "+
				"(or sops' fallback) and whoever holds the rule's key cannot decrypt it.",
			"for each file: decrypt it with a key that can (sops -d), copy the plaintext to its final path, then encrypt in place with `sops -e -i PATH` "+
				"(or `sops updatekeys PATH` when you can already decrypt it); write rules that match the final paths")
	}
	if len(files) == 0 {
		return pass("no SOPS-encrypted file in the repository")
	}
	return pass(evidence...)
}
