package kubereal

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// csiImage is the Hetzner CSI driver's image (controller and node
// plugin), any registry and tag.
const csiImage = "hetznercloud/hcloud-csi-driver"

// podEnv is the environment a container of a running pod got: its env
// values, Secret keys and envFrom Secrets, and its command and args.
type podEnv struct {
	node string
	vars map[string]string
	args []string
}

// imageIs reports whether img is repo with any registry, tag or digest.
func imageIs(img, repo string) bool {
	if i := strings.LastIndex(img, "@"); i >= 0 {
		img = img[:i]
	}

	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}

	return img == repo || strings.HasSuffix(img, "/"+repo)
}

// running is the environment of the first Ready pod (by namespace and
// name) with a container of image repo that keep accepts; false while
// none runs.
func (s *Simulators) running(repo string, keep func(podEnv) bool) (podEnv, bool) {
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		return podEnv{}, false
	}

	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})

	for _, p := range pods {
		if p.DeletionTimestamp != nil || !podReady(p) {
			continue
		}

		for _, c := range p.Spec.Containers {
			if !imageIs(c.Image, repo) {
				continue
			}

			if env := s.containerEnv(p, c); keep == nil || keep(env) {
				return env, true
			}
		}
	}

	return podEnv{}, false
}

func (s *Simulators) containerEnv(p *corev1.Pod, c corev1.Container) podEnv {
	env := podEnv{node: p.Spec.NodeName, vars: map[string]string{}, args: append(slices.Clone(c.Command), c.Args...)}

	for _, ef := range c.EnvFrom {
		if ef.SecretRef == nil {
			continue
		}

		if sec, err := s.secrets.Secrets(p.Namespace).Get(ef.SecretRef.Name); err == nil {
			for k, v := range sec.Data {
				env.vars[ef.Prefix+k] = string(v)
			}
		}
	}

	for _, e := range c.Env {
		env.vars[e.Name] = e.Value

		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			if sec, err := s.secrets.Secrets(p.Namespace).Get(ref.Name); err == nil {
				env.vars[e.Name] = strings.TrimSpace(string(sec.Data[ref.Key]))
			}
		}
	}

	return env
}

// flag is a boolean environment variable as the CCM reads it (strconv.
// ParseBool; unset or unparsable: def).
func (e podEnv) flag(name string, def bool) bool {
	v, ok := e.vars[name]
	if !ok {
		return def
	}

	b, err := strconv.ParseBool(v)
	if err != nil {
		return def
	}

	return b
}

// arg is the value of a --name=value flag among the command and args.
func (e podEnv) arg(name string) (string, bool) {
	for _, a := range e.args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}

	return "", false
}
