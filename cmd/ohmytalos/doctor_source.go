package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/doctor/hcloudsource"
	"github.com/ohmytalos/ohmytalos/internal/doctor/kubesource"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/steps"
)

// doctorInputs are the doctor's flags for a cluster without a spec.
type doctorInputs struct {
	kubeconfig, context, talosconfig, cluster string
}

// doctorSource is what the checks read, however it was gathered.
type doctorSource struct {
	env     *doctor.Env
	notes   []string
	redact  func(string) string
	sandbox bool
	close   func()
}

// haveSpec reports whether the doctor runs on a spec: the spec file exists,
// or --config named one (a missing named file is then an error).
func (g *globals) haveSpec(cmd *cobra.Command) bool {
	if _, err := os.Stat(g.config); err == nil || !errors.Is(err, os.ErrNotExist) {
		return true
	}
	return cmd.Flags().Changed("config")
}

// doctorSource gathers the checks' sources from the spec and the cluster's
// state, or, without a spec, from the environment and flags.
func (g *globals) doctorSource(cmd *cobra.Command, o steps.DoctorOptions, in doctorInputs) (*doctorSource, error) {
	ctx := cmd.Context()
	if !g.haveSpec(cmd) {
		return g.specLessDoctor(o, in)
	}
	s, err := g.loadSpec()
	if err != nil {
		return nil, err
	}
	rt, err := g.runtime(ctx, s)
	if err != nil {
		return nil, err
	}
	env, closeSrc, notes := steps.DoctorEnv(ctx, rt.deps, rt.env, o)
	return &doctorSource{env: env, notes: notes, redact: rt.redact, sandbox: rt.deps.Sandbox,
		close: func() { closeSrc(); rt.Close() }}, nil
}

// Checks that compare the nodes with what the spec says they should be.
var specChecks = []string{"vip-link", "vip-claimed", "etcd"}

// specLessDoctor builds the doctor's sources for a cluster ohmytalos may
// not have built: Kubernetes from --kubeconfig, $KUBECONFIG or
// ~/.kube/config; Hetzner from $HCLOUD_TOKEN with --cluster; a check that
// lacks what it needs skips with the reason.
func (g *globals) specLessDoctor(o steps.DoctorOptions, in doctorInputs) (*doctorSource, error) {
	if g.sandbox {
		return nil, fmt.Errorf("doctor --sandbox checks the sandboxed cluster of a spec, and %s does not exist: run it beside ohmytalos.yaml, or use \"ohmytalos sandbox serve\" and its environment", g.config)
	}
	env := &doctor.Env{ClusterName: in.cluster, Domains: o.Domains, Resolver: o.Resolver, RepoDir: o.RepoDir,
		ExternalDNSOwner: o.Owner, Skip: map[string]string{}}
	notes := []string{fmt.Sprintf("no spec (%s does not exist): checking what the environment and flags point at", g.config)}
	notes = append(notes, specLessKube(env, in.kubeconfig, in.context)...)
	notes = append(notes, specLessTalos(env, in.talosconfig)...)
	token := strings.TrimSpace(os.Getenv("HCLOUD_TOKEN"))
	notes = append(notes, specLessCloud(env, token, in.cluster)...)
	tok := secrets.NewValue(token)
	g.secrets.Add(tok)
	return &doctorSource{env: env, notes: notes, redact: func(s string) string { return secrets.Redact(s, tok) },
		sandbox: cloud.IsSandbox(context.Background(), cloud.Endpoint("")), close: func() {}}, nil
}

// configPath is the first of: the flag, the first entry of the variable,
// the file under the home folder when it exists. how says which.
func configPath(flag, variable, home string) (path, how string) {
	if flag != "" {
		return flag, "flag"
	}
	if v := os.Getenv(variable); v != "" {
		return filepath.SplitList(v)[0], "$" + variable
	}
	if h, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(h, home)
		if _, err := os.Stat(p); err == nil {
			return p, "default"
		}
	}
	return "", ""
}

// specLessKube loads the kubeconfig as kubectl does (clientcmd): the
// flag's file, else every file of $KUBECONFIG merged, else ~/.kube/config.
func specLessKube(env *doctor.Env, flag, contextName string) []string {
	path, how := configPath(flag, "KUBECONFIG", filepath.Join(".kube", "config"))
	if path == "" {
		return []string{"Kubernetes checks skip: no kubeconfig (pass --kubeconfig or set KUBECONFIG)"}
	}
	k := kube.Kubeconfig{Path: flag, Context: contextName}
	if how == "$KUBECONFIG" {
		path = os.Getenv("KUBECONFIG") // clientcmd merges the whole list
	}
	ks, err := kubesource.Open(k)
	if err != nil {
		return []string{fmt.Sprintf("Kubernetes checks skip: kubeconfig %s (%s): %v", path, how, err)}
	}
	env.Kube = ks
	which := "its current context"
	if contextName != "" {
		which = "context " + contextName
	}
	return []string{fmt.Sprintf("Kubernetes: %s (%s), %s", path, how, which)}
}

func specLessTalos(env *doctor.Env, flag string) []string {
	path, how := configPath(flag, "TALOSCONFIG", filepath.Join(".talos", "config"))
	reason := "no spec: this check compares the control planes and the VIP with ohmytalos.yaml; run the doctor beside the spec"
	note := "Talos checks (" + strings.Join(specChecks, ", ") + ") skip: they compare the nodes with the spec"
	if path != "" {
		if b, err := os.ReadFile(path); err != nil {
			note += fmt.Sprintf("; talosconfig %s (%s) is not readable: %v", path, how, err)
		} else {
			env.Talosconfig = b // talos-endpoints needs no spec
			note += fmt.Sprintf(" (talosconfig %s (%s) found, but the spec names the control planes and the VIP)", path, how)
		}
	} else {
		reason = "no spec and no talosconfig: this check needs the Talos API (--talosconfig or TALOSCONFIG) and ohmytalos.yaml to compare with"
	}
	for _, id := range specChecks {
		env.Skip[id] = reason
	}
	return []string{note}
}

func specLessCloud(env *doctor.Env, token, cluster string) []string {
	switch {
	case token == "":
		return []string{"Hetzner checks skip: HCLOUD_TOKEN is not set"}
	case cluster == "":
		env.Skip["lb-targets"] = "no spec and no --cluster: the doctor cannot tell which Hetzner load balancers are the cluster's; pass --cluster NAME (its ohmytalos.io/cluster label)"
		return []string{"Hetzner checks skip: pass --cluster NAME to pick the cluster's resources"}
	}
	if err := cloud.CheckEndpoint(""); err != nil {
		return []string{"Hetzner checks skip: " + err.Error()}
	}
	env.Cloud = hcloudsource.New(cloud.NewClient(token, cloud.Options{Version: version}), cluster)
	return []string{fmt.Sprintf("Hetzner: HCLOUD_TOKEN (endpoint %s), resources labelled ohmytalos.io/cluster=%s", cloud.Endpoint(""), cluster)}
}
