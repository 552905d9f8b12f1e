package kubetest

import (
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// AdminKubeconfig is a kubeconfig for cp with a client certificate in
// system:masters, as talosctl kubeconfig hands out.
func AdminKubeconfig(t testing.TB, cp *kubereal.ControlPlane) []byte {
	t.Helper()

	crt, key, err := cp.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}

	c := clientcmdapi.NewConfig()
	c.Clusters["real"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.CACert()}
	c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	c.Contexts["admin@real"] = &clientcmdapi.Context{Cluster: "real", AuthInfo: "admin"}
	c.CurrentContext = "admin@real"

	b, err := clientcmd.Write(*c)
	if err != nil {
		t.Fatal(err)
	}

	return b
}
