package kubefake

import (
	"errors"
	"fmt"
)

// InstallCRD creates a CustomResourceDefinition as a component of the
// cluster itself does (Talos applies its own CRDs at bootstrap, with no
// client involved): no authentication, and one that exists already is
// left as it is. The definition is validated as an API create would be.
func (s *Server) InstallCRD(crd map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()

	_, err := s.createLocked(s.builtinLocked("customresourcedefinitions"), "", copyObj(crd), createOpts{})

	var ae *apiError
	if errors.As(err, &ae) && ae.reason == "AlreadyExists" {
		return nil
	}

	if err != nil {
		return fmt.Errorf("install CRD %v: %w", str(crd, "metadata", "name"), err)
	}

	return nil
}
