package clients

import (
	"context"
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// kubeconfigSecret is the state secret bootstrap stores the admin
// kubeconfig under (steps' secretKubeconfig).
const kubeconfigSecret = "kubeconfig"

// Kube returns a client for the cluster from the kubeconfig bootstrap
// stored: the one way the product's Kubernetes calls are made.
func (c *Set) Kube(ctx context.Context, env *engine.Env) (*kube.Client, error) {
	kc, err := env.State.Secret(kubeconfigSecret)
	if err != nil {
		return nil, fmt.Errorf("no kubeconfig stored yet (%w): run the bootstrap step first", err)
	}
	client, err := kube.New(kc)
	if err != nil {
		return nil, fmt.Errorf("stored kubeconfig %s: %w", env.State.SecretPath(kubeconfigSecret), err)
	}
	return client, nil
}
