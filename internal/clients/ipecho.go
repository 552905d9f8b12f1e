package clients

import (
	"context"
	"os"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// EchoURLs are the IP-echo services: the spec's firewall.ipEchoURL, else
// IPEchoURL (the sandbox's), else $OHMYTALOS_IP_ECHO_URL, else the public
// defaults.
func (c *Set) EchoURLs(sp *spec.Spec) []string {
	env := c.IPEchoURL
	if env == "" {
		env = os.Getenv(myip.URLEnv)
	}
	return myip.URLs(sp.Firewall.IPEchoURL, env)
}

// OperatorAddress detects the operator's address once per process and
// echo services, so plan and apply of one run agree.
func (c *Set) OperatorAddress(ctx context.Context, urls []string) (myip.Addresses, error) {
	key := strings.Join(urls, ",")
	if a, ok := cached(&c.cache.mu, &c.cache.operator, key); ok {
		return a, nil
	}
	a, err := myip.Detect(ctx, c.HTTP, urls)
	if err != nil {
		return a, err
	}
	remember(&c.cache.mu, &c.cache.operator, key, a)
	return a, nil
}
