package releases

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// getter is helm's RESTClientGetter (genericclioptions) over a kubeconfig
// held in memory, for one namespace: what the helm CLI builds from
// --kubeconfig and --namespace (pkg/cli/environment.go), without a file.
type getter struct {
	cc        clientcmd.ClientConfig
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

// Client-side rate limits: helm's discovery and a chart's many objects
// would wait on client-go's defaults (QPS 5); kubectl uses burst 300.
const (
	clientQPS   = 50
	clientBurst = 300
)

func newGetter(cfg *clientcmdapi.Config, namespace string) (*getter, error) {
	cc := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: namespace}})

	rc, err := restConfig(cc)
	if err != nil {
		return nil, err
	}

	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes discovery client: %w", err)
	}

	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)

	return &getter{cc: cc, discovery: cached, mapper: mapper}, nil
}

func restConfig(cc clientcmd.ClientConfig) (*rest.Config, error) {
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}

	rc.QPS, rc.Burst = clientQPS, clientBurst

	return rc, nil
}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (g *getter) ToRESTConfig() (*rest.Config, error) { return restConfig(g.cc) }

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (g *getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (g *getter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter.
func (g *getter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return g.cc }
