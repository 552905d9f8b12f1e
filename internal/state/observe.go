package state

// SetSecretObserver registers fn to see every secret blob this store
// decrypts or encrypts, by name, before it is used: the command redacts
// what it holds (the bundle's CA keys, the kubeconfig's client key) from
// every message, whichever step read it.
func (s *Store) SetSecretObserver(fn func(name string, plaintext []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = fn
}

func (s *Store) observed(name string, plaintext []byte) {
	s.mu.Lock()
	fn := s.observe
	s.mu.Unlock()
	if fn != nil {
		fn(name, plaintext)
	}
}
