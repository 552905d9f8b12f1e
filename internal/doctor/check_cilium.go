package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The capabilities Talos' Cilium guide sets (docs.siderolabs.com,
// kubernetes-guides/cni/deploying-cilium): the chart's defaults minus
// SYS_MODULE, because Talos does not let Kubernetes workloads load kernel
// modules and the container runtime then fails with `unable to apply caps:
// operation not permitted`.
var (
	talosAgentCaps = []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}
	talosCleanCaps = []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"}
	// chartDefault*Caps are the Cilium chart's defaults, used when a values
	// file does not set securityContext.capabilities.
	chartDefaultAgentCaps = []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}
	chartDefaultCleanCaps = []string{"NET_ADMIN", "SYS_MODULE", "SYS_ADMIN", "SYS_RESOURCE"}
)

// KubePrismPort is the port of Talos' local API server proxy.
const KubePrismPort = 7445

// checkCiliumTalos verifies the Cilium settings Talos needs, in the deployed
// cluster and in the Helm values files of the repository (field notes,
// pitfalls 1 and 2).
func checkCiliumTalos(ctx context.Context, env *Env) Result {
	var configs []CiliumConfig
	var notes []string
	if env.Kube != nil {
		c, err := env.Kube.CiliumConfig(ctx)
		if err != nil {
			return sourceError("Cilium's configuration from the cluster", err)
		}
		if c != nil {
			if c.Source == "" {
				c.Source = "cluster"
			}
			configs = append(configs, *c)
		} else {
			notes = append(notes, "cluster: Cilium is not installed (no kube-system/cilium DaemonSet)")
		}
	} else {
		notes = append(notes, "cluster: "+noKube)
	}
	switch {
	case len(configs) > 0 && env.RepoDir != "":
		// What runs is what counts: the repository's values may be stale.
		notes = append(notes, "repository: Cilium values not read, the installed Cilium in the cluster is what runs")
	case env.RepoDir != "":
		if err := checkRepoDir(env.RepoDir); err != nil {
			return repoError(err)
		}
		found, err := ciliumValuesFiles(env.RepoDir)
		if err != nil {
			return repoError(fmt.Errorf("read Cilium values in %s: %w", env.RepoDir, err))
		}
		configs = append(configs, found...)
		if len(found) == 0 {
			notes = append(notes, "repository: no Cilium Helm values file found")
		}
	}
	if len(configs) == 0 {
		return skip("no Cilium configuration to check: " + strings.Join(notes, "; "))
	}
	var problems, evidence, fixes []string
	warn := false
	for _, c := range configs {
		p, w, f := ciliumProblems(env, c)
		problems = append(problems, p...)
		fixes = append(fixes, f...)
		evidence = append(evidence, fmt.Sprintf("%s: k8sServiceHost=%q k8sServicePort=%d cgroup.autoMount=%t hostRoot=%q agent caps=[%s] cleanCiliumState caps=[%s]",
			c.Source, c.K8sServiceHost, c.K8sServicePort, c.CgroupAutoMount, c.CgroupHostRoot, strings.Join(c.AgentCaps, ","), strings.Join(c.CleanCaps, ",")))
		if len(w) > 0 {
			warn = true
			evidence = append(evidence, w...)
		}
	}
	evidence = append(evidence, notes...)
	if len(problems) > 0 {
		return failed(problems, evidence,
			"Talos needs Cilium configured for it: the agent's capabilities without SYS_MODULE (else the init containers fail with "+
				"`unable to apply caps: operation not permitted`), Talos' own cgroup2 mount instead of Cilium's (cgroup.autoMount.enabled: false, cgroup.hostRoot: /sys/fs/cgroup), "+
				"and the API server reached through KubePrism (localhost:7445): with kube-proxy disabled nothing else works before Cilium is up, and the VIP is only claimed once etcd is healthy.",
			strings.Join(uniq(fixes), "; "))
	}
	if warn {
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: "Cilium's settings work, but differ from what Talos recommends",
			Fix:         strings.Join(uniq(fixes), "; ")}
	}
	return pass(evidence...)
}

func ciliumProblems(env *Env, c CiliumConfig) (problems, warnings, fixes []string) {
	var missing []string
	for _, capName := range talosAgentCaps {
		if !containsFold(c.AgentCaps, capName) {
			missing = append(missing, capName)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s: cilium-agent lacks capabilities %s", c.Source, strings.Join(missing, ", ")))
	}
	missing = nil
	for _, capName := range talosCleanCaps {
		if !containsFold(c.CleanCaps, capName) {
			missing = append(missing, capName)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s: clean-cilium-state lacks capabilities %s", c.Source, strings.Join(missing, ", ")))
	}
	if containsFold(c.AgentCaps, "SYS_MODULE") || containsFold(c.CleanCaps, "SYS_MODULE") {
		problems = append(problems, fmt.Sprintf("%s: SYS_MODULE is requested, which Talos does not grant to workloads", c.Source))
	}
	if len(problems) > 0 {
		fixes = append(fixes, "set securityContext.capabilities.ciliumAgent to {"+strings.Join(talosAgentCaps, ",")+"} and securityContext.capabilities.cleanCiliumState to {"+strings.Join(talosCleanCaps, ",")+"}")
	}
	if c.CgroupAutoMount {
		problems = append(problems, fmt.Sprintf("%s: cgroup.autoMount.enabled is true", c.Source))
		fixes = append(fixes, "set cgroup.autoMount.enabled: false and cgroup.hostRoot: /sys/fs/cgroup")
	} else if c.CgroupHostRoot != "" && c.CgroupHostRoot != "/sys/fs/cgroup" {
		warnings = append(warnings, fmt.Sprintf("%s: cgroup.hostRoot is %q, Talos mounts cgroup2 at /sys/fs/cgroup", c.Source, c.CgroupHostRoot))
		fixes = append(fixes, "set cgroup.hostRoot: /sys/fs/cgroup")
	}
	host := strings.TrimSpace(c.K8sServiceHost)
	kubePrismFix := fmt.Sprintf("set k8sServiceHost: localhost and k8sServicePort: %d (KubePrism)", KubePrismPort)
	switch {
	case host == "":
		problems = append(problems, fmt.Sprintf("%s: k8sServiceHost is not set, so the agent needs kube-proxy's service IP, which does not exist with kube-proxy disabled", c.Source))
		fixes = append(fixes, kubePrismFix)
	case env.VIP != "" && host == env.VIP:
		problems = append(problems, fmt.Sprintf("%s: k8sServiceHost is the VIP %s: agents time out (`dial tcp %s:6443: i/o timeout`) until a control plane claims it", c.Source, env.VIP, env.VIP))
		fixes = append(fixes, kubePrismFix)
	case host == "localhost" || host == "127.0.0.1":
		if c.K8sServicePort != KubePrismPort {
			problems = append(problems, fmt.Sprintf("%s: k8sServiceHost is %s but k8sServicePort is %d, not KubePrism's %d", c.Source, host, c.K8sServicePort, KubePrismPort))
			fixes = append(fixes, kubePrismFix)
		}
	default:
		warnings = append(warnings, fmt.Sprintf("%s: k8sServiceHost is %s:%d, not KubePrism: Cilium then depends on that endpoint being up", c.Source, host, c.K8sServicePort))
		fixes = append(fixes, kubePrismFix)
	}
	return problems, warnings, fixes
}

// ciliumValuesFiles reads the Helm values files for Cilium in the repository:
// YAML files whose path mentions cilium and that set one of the keys Talos
// cares about.
func ciliumValuesFiles(dir string) ([]CiliumConfig, error) {
	var out []CiliumConfig
	err := walkRepo(dir, func(rel string, data []byte) error {
		if !isYAML(rel) || !strings.Contains(strings.ToLower(rel), "cilium") {
			return nil
		}
		docs, err := yamlDocs(data)
		if err != nil {
			return nil // templated or broken: the helmfile check reports those
		}
		for _, d := range docs {
			if c, ok := ciliumFromValues(d); ok {
				c.Source = rel
				out = append(out, c)
			}
		}
		return nil
	})
	return out, err
}

func ciliumFromValues(v map[string]any) (CiliumConfig, bool) {
	relevant := false
	for _, k := range []string{"k8sServiceHost", "securityContext", "cgroup", "kubeProxyReplacement", "ipam"} {
		if _, ok := v[k]; ok {
			relevant = true
		}
	}
	if !relevant {
		return CiliumConfig{}, false
	}
	c := CiliumConfig{
		AgentCaps:       chartDefaultAgentCaps,
		CleanCaps:       chartDefaultCleanCaps,
		CgroupAutoMount: true,
		CgroupHostRoot:  "/run/cilium/cgroupv2",
	}
	if x, ok := lookupPath(v, "securityContext", "capabilities", "ciliumAgent"); ok {
		c.AgentCaps, _ = stringList(x)
	}
	if x, ok := lookupPath(v, "securityContext", "capabilities", "cleanCiliumState"); ok {
		c.CleanCaps, _ = stringList(x)
	}
	if x, ok := lookupPath(v, "cgroup", "autoMount", "enabled"); ok {
		b, isBool := x.(bool)
		c.CgroupAutoMount = !isBool || b
	}
	if x, ok := lookupPath(v, "cgroup", "hostRoot"); ok {
		c.CgroupHostRoot = fmt.Sprint(x)
	}
	if x, ok := v["k8sServiceHost"]; ok {
		c.K8sServiceHost = fmt.Sprint(x)
	}
	if x, ok := v["k8sServicePort"]; ok {
		c.K8sServicePort, _ = strconv.Atoi(fmt.Sprint(x))
	}
	if x, ok := v["MTU"]; ok {
		c.MTU, _ = strconv.Atoi(fmt.Sprint(x))
	}
	return c, true
}
