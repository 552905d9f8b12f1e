package talos

// BundleSecrets returns the secret values of a secrets bundle (as
// NewBundle writes it), for redaction: the cluster secret, the bootstrap
// token, the secretbox and aescbc encryption secrets, the trustd token and
// the private keys of every CA (etcd, Kubernetes, aggregator, Talos API)
// and of the service accounts, as PEM. Certificates and the cluster ID
// are public and left out. The fields are those of machinery's
// config/generate/secrets.Bundle (secrets.go: Cluster, Secrets,
// TrustdInfo, Certs).
func BundleSecrets(data []byte) (values, keys []string, err error) {
	b, err := LoadBundle(data)
	if err != nil {
		return nil, nil, err
	}
	if b.Cluster != nil {
		values = append(values, b.Cluster.Secret)
	}
	if b.Secrets != nil {
		values = append(values, b.Secrets.BootstrapToken, b.Secrets.AESCBCEncryptionSecret, b.Secrets.SecretboxEncryptionSecret)
	}
	if b.TrustdInfo != nil {
		values = append(values, b.TrustdInfo.Token)
	}
	if c := b.Certs; c != nil {
		if c.Etcd != nil {
			keys = append(keys, string(c.Etcd.Key))
		}
		if c.K8s != nil {
			keys = append(keys, string(c.K8s.Key))
		}
		if c.K8sAggregator != nil {
			keys = append(keys, string(c.K8sAggregator.Key))
		}
		if c.K8sServiceAccount != nil {
			keys = append(keys, string(c.K8sServiceAccount.Key))
		}
		if c.OS != nil {
			keys = append(keys, string(c.OS.Key))
		}
	}
	return values, keys, nil
}
