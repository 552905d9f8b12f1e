package kube

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// requestTimeout bounds every API request (not the waits built on them).
const requestTimeout = 60 * time.Second

// Kubeconfig says where a kubeconfig comes from and which context to use.
// It is loaded with client-go's clientcmd, as kubectl loads it: exec and
// auth-provider plugins, client certificates and tokens (inline or in
// files), tls-server-name, proxy-url, and $KUBECONFIG lists merged by
// clientcmd's loading rules (k8s.io/client-go/tools/clientcmd/loader.go:
// the first file to set a value wins).
type Kubeconfig struct {
	// Data is a kubeconfig held in memory (the one bootstrap stored). It wins
	// over Path and the loading rules; relative file references in it resolve
	// against the working directory.
	Data []byte
	// Path is an explicit kubeconfig file (--kubeconfig); relative file
	// references resolve against its folder. Empty: $KUBECONFIG (a list),
	// else ~/.kube/config.
	Path string
	// Context is the context to use; empty: the current-context.
	Context string
}

// load reads the raw kubeconfig: Data, or the file(s) the loading rules
// name.
func (k Kubeconfig) load() (*clientcmdapi.Config, error) {
	if k.Data != nil {
		cfg, err := clientcmd.Load(k.Data)
		if err != nil {
			return nil, fmt.Errorf("parse kubeconfig: %w", err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Path
	cfg, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	if len(cfg.Contexts) == 0 && k.Path == "" {
		return nil, errors.New("no kubeconfig found ($KUBECONFIG and ~/.kube/config hold no context): pass --kubeconfig or set KUBECONFIG")
	}
	return cfg, nil
}

// Contexts lists a kubeconfig's context names, the current one first, and
// names the current one ("" when none is set).
func Contexts(data []byte) (names []string, current string, err error) {
	cfg, err := Kubeconfig{Data: data}.load()
	if err != nil {
		return nil, "", err
	}
	return contextNames(cfg), cfg.CurrentContext, nil
}

// contextNames sorts the context names, the current one first.
func contextNames(cfg *clientcmdapi.Config) []string {
	var names []string
	for n := range cfg.Contexts {
		if n != cfg.CurrentContext {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := cfg.Contexts[cfg.CurrentContext]; ok {
		names = append([]string{cfg.CurrentContext}, names...)
	}
	return names
}

// Context is one kubeconfig context resolved to a client configuration.
type Context struct {
	Name    string
	Current bool
	// Server is the API server URL of the context's cluster.
	Server string
	// REST is client-go's configuration for the context (plugins included).
	REST *rest.Config
}

// Contexts resolves every context of the kubeconfig, the current one first.
func (k Kubeconfig) Contexts() ([]Context, error) {
	cfg, err := k.load()
	if err != nil {
		return nil, err
	}
	var out []Context
	for _, name := range contextNames(cfg) {
		rc, err := restConfig(cfg, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Context{Name: name, Current: name == cfg.CurrentContext, Server: rc.Host, REST: rc})
	}
	return out, nil
}

// RESTConfig resolves the kubeconfig's context to client-go's configuration.
func (k Kubeconfig) RESTConfig() (*rest.Config, error) {
	cfg, err := k.load()
	if err != nil {
		return nil, err
	}
	name := k.Context
	if name == "" {
		name = cfg.CurrentContext
	}
	return restConfig(cfg, name)
}

// restConfig checks a context with the operator's words, then lets
// clientcmd build the configuration.
func restConfig(cfg *clientcmdapi.Config, name string) (*rest.Config, error) {
	if err := check(cfg, name); err != nil {
		return nil, err
	}
	cc := clientcmd.NewNonInteractiveClientConfig(*cfg, name, &clientcmd.ConfigOverrides{}, nil)
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", name, err)
	}
	rc.Timeout = requestTimeout
	// No client-side throttling (client-go's default is 5 requests/s): the
	// API server's priority and fairness answers 429, which callers retry.
	rc.QPS = -1
	// API warnings (deprecations) would otherwise go to stderr under the TUI.
	rc.WarningHandler = rest.NoWarnings{}
	return rc, nil
}

// check names what a context lacks before clientcmd sees it, and refuses
// a server that is not https: the credentials would travel in clear.
func check(cfg *clientcmdapi.Config, name string) error {
	if name == "" {
		return errors.New("kubeconfig has no current-context and no context was given: pass the context name")
	}
	kctx, ok := cfg.Contexts[name]
	if !ok {
		return fmt.Errorf("kubeconfig has no context %q (it has: %v)", name, contextNames(cfg))
	}
	cl, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return fmt.Errorf("kubeconfig context %q names cluster %q, which is not defined", name, kctx.Cluster)
	}
	if u, err := url.Parse(cl.Server); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("cluster %q: server %q is not an https:// URL", kctx.Cluster, cl.Server)
	}
	if _, ok := cfg.AuthInfos[kctx.AuthInfo]; !ok {
		return fmt.Errorf("kubeconfig context %q names user %q, which is not defined", name, kctx.AuthInfo)
	}
	return nil
}
