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
	return fromKubeconfig(env, kube.New)
}

// fromKubeconfig builds a client with build from the kubeconfig bootstrap
// stored.
func fromKubeconfig[T any](env *engine.Env, build func(kubeconfig []byte) (T, error)) (T, error) {
	var zero T
	kc, err := env.State.Secret(kubeconfigSecret)
	if err != nil {
		return zero, fmt.Errorf("no kubeconfig stored yet (%w): run the bootstrap step first", err)
	}
	client, err := build(kc)
	if err != nil {
		return zero, fmt.Errorf("stored kubeconfig %s: %w", env.State.SecretPath(kubeconfigSecret), err)
	}
	return client, nil
}
