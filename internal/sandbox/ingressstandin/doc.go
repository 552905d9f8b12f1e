// Package ingressstandin is the sandbox's Traefik stand-in, run by the
// real control plane's simulators (kubereal/traefik.go): listeners on the nodes' addresses at a Service's node
// ports that answer as Traefik answers with no route configured. Which
// addresses to serve is the caller's business (it reads its own API
// server); this package only opens, answers and closes.
package ingressstandin
