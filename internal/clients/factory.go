package clients

import "github.com/ohmytalos/ohmytalos/internal/factory"

// FactoryBaseURL is the Image Factory's base URL: FactoryURL, else the
// public factory.
func (c *Set) FactoryBaseURL() string {
	if c.FactoryURL != "" {
		return c.FactoryURL
	}
	return factory.DefaultBaseURL
}

// Factory returns an Image Factory client at FactoryBaseURL.
func (c *Set) Factory() *factory.Client {
	return factory.NewClient(c.FactoryBaseURL(), c.HTTP)
}
