package kube

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// kubeconfig mirrors the parts of clientcmd's v1 Config ohmytalos uses
// (k8s.io/client-go/tools/clientcmd/api/v1 types.go: Config, Cluster,
// AuthInfo, Context and their JSON names).
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			TLSServerName            string `yaml:"tls-server-name"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			ClientCertificate     string    `yaml:"client-certificate"`
			ClientCertificateData string    `yaml:"client-certificate-data"`
			ClientKey             string    `yaml:"client-key"`
			ClientKeyData         string    `yaml:"client-key-data"`
			Token                 string    `yaml:"token"`
			TokenFile             string    `yaml:"tokenFile"`
			Exec                  *struct{} `yaml:"exec"`
			AuthProvider          *struct{} `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// Endpoint is what a kubeconfig context resolves to: the API server URL,
// the TLS settings (CA, client certificate) and an optional bearer token.
type Endpoint struct {
	Server string
	TLS    *tls.Config
	Token  string
}

// readRef returns inline base64 data, or the content of a file reference
// resolved against baseDir.
func readRef(data, file, baseDir, what string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("decode %s-data: not valid base64: %w", what, err)
		}
		return b, nil
	}
	if file == "" {
		return nil, nil
	}
	if !filepath.IsAbs(file) && baseDir != "" {
		file = filepath.Join(baseDir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, file, err)
	}
	return b, nil
}

// Contexts lists a kubeconfig's context names, the current one first, and
// names the current one ("" when none is set).
func Contexts(data []byte) (names []string, current string, err error) {
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, "", fmt.Errorf("parse kubeconfig: %w", err)
	}
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			names = append([]string{c.Name}, names...)
		} else {
			names = append(names, c.Name)
		}
	}
	return names, kc.CurrentContext, nil
}

// ParseKubeconfig resolves contextName (the current context when empty) to
// an Endpoint. baseDir resolves relative file references.
func ParseKubeconfig(data []byte, contextName, baseDir string) (Endpoint, error) {
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return Endpoint{}, fmt.Errorf("parse kubeconfig: %w", err)
	}
	if contextName == "" {
		contextName = kc.CurrentContext
	}
	if contextName == "" {
		return Endpoint{}, errors.New("kubeconfig has no current-context and no context was given: pass the context name")
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == contextName {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return Endpoint{}, fmt.Errorf("kubeconfig has no context %q", contextName)
	}
	var ep Endpoint
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		ep.Server = strings.TrimRight(c.Cluster.Server, "/")
		tc.ServerName = c.Cluster.TLSServerName
		tc.InsecureSkipVerify = c.Cluster.InsecureSkipTLSVerify //nolint:gosec // honoured as kubectl does, when the operator asks for it
		ca, err := readRef(c.Cluster.CertificateAuthorityData, c.Cluster.CertificateAuthority, baseDir, "certificate-authority")
		if err != nil {
			return Endpoint{}, fmt.Errorf("cluster %q: %w", clusterName, err)
		}
		if len(ca) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return Endpoint{}, fmt.Errorf("cluster %q: certificate-authority holds no PEM certificate", clusterName)
			}
			tc.RootCAs = pool
		}
	}
	if !found {
		return Endpoint{}, fmt.Errorf("kubeconfig context %q names cluster %q, which is not defined", contextName, clusterName)
	}
	if !strings.HasPrefix(ep.Server, "https://") {
		return Endpoint{}, fmt.Errorf("cluster %q: server %q is not an https:// URL", clusterName, ep.Server)
	}
	found = false
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		found = true
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return Endpoint{}, fmt.Errorf("user %q authenticates with an exec or auth-provider plugin, which ohmytalos does not run: use a kubeconfig with a client certificate or token (talosctl kubeconfig writes one)", userName)
		}
		cert, err := readRef(u.User.ClientCertificateData, u.User.ClientCertificate, baseDir, "client-certificate")
		if err != nil {
			return Endpoint{}, fmt.Errorf("user %q: %w", userName, err)
		}
		key, err := readRef(u.User.ClientKeyData, u.User.ClientKey, baseDir, "client-key")
		if err != nil {
			return Endpoint{}, fmt.Errorf("user %q: %w", userName, err)
		}
		if len(cert) > 0 || len(key) > 0 {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				// The key's content never goes into the message.
				return Endpoint{}, fmt.Errorf("user %q: client certificate and key do not form a valid pair", userName)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		ep.Token = u.User.Token
		if ep.Token == "" && u.User.TokenFile != "" {
			b, err := readRef("", u.User.TokenFile, baseDir, "tokenFile")
			if err != nil {
				return Endpoint{}, fmt.Errorf("user %q: %w", userName, err)
			}
			ep.Token = strings.TrimSpace(string(b))
		}
	}
	if !found {
		return Endpoint{}, fmt.Errorf("kubeconfig context %q names user %q, which is not defined", contextName, userName)
	}
	ep.TLS = tc
	return ep, nil
}
