package kubereal

import "k8s.io/client-go/rest"

// RESTConfig is a client-go configuration for kube-apiserver's loopback
// URL, authenticated as cn in groups orgs by a certificate from the
// cluster's CA (for dynamic and typed clients alike).
func (c *ControlPlane) RESTConfig(cn string, orgs ...string) (*rest.Config, error) {
	crt, key, err := c.ClientCert(cn, orgs...)
	if err != nil {
		return nil, err
	}

	return &rest.Config{Host: c.URL, QPS: 50, Burst: 100,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CACert(), CertData: crt, KeyData: key}}, nil
}
