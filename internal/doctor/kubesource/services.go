package kubesource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

var _ doctor.ServiceSource = (*Source)(nil)

// ccmDeployment is where the ccm add-on (and the upstream manifests,
// hcloud-cloud-controller-manager deploy/ccm-networks.yaml) run the
// controller.
const ccmNamespace, ccmName = "kube-system", "hcloud-cloud-controller-manager"

type service struct {
	Metadata struct {
		Namespace   string            `json:"namespace"`
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Type string `json:"type"`
	} `json:"spec"`
	Status struct {
		LoadBalancer struct {
			Ingress []struct {
				IP       string `json:"ip"`
				Hostname string `json:"hostname"`
			} `json:"ingress"`
		} `json:"loadBalancer"`
	} `json:"status"`
}

type event struct {
	InvolvedObject struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"involvedObject"`
	Message       string `json:"message"`
	LastTimestamp string `json:"lastTimestamp"`
	EventTime     string `json:"eventTime"`
}

// LoadBalancerServices lists the Services of type LoadBalancer (GET
// /api/v1/services) with the messages of their Warning events (GET
// /api/v1/events, field selector involvedObject.kind=Service,type=Warning).
func (s *Source) LoadBalancerServices(ctx context.Context) ([]doctor.LBService, error) {
	var out []doctor.LBService
	index := map[string]int{}
	err := s.list(ctx, "/api/v1/services", nil, func(raw json.RawMessage) error {
		var svc service
		if err := json.Unmarshal(raw, &svc); err != nil {
			return fmt.Errorf("decode a Service: %w", err)
		}
		if svc.Spec.Type != "LoadBalancer" {
			return nil
		}
		l := doctor.LBService{Namespace: svc.Metadata.Namespace, Name: svc.Metadata.Name, Annotations: svc.Metadata.Annotations}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				l.Ingress = append(l.Ingress, in.IP)
			} else if in.Hostname != "" {
				l.Ingress = append(l.Ingress, in.Hostname)
			}
		}
		index[l.Namespace+"/"+l.Name] = len(out)
		out = append(out, l)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	var evs []event
	q := url.Values{"fieldSelector": {"involvedObject.kind=Service,type=Warning"}}
	err = s.list(ctx, "/api/v1/events", q, func(raw json.RawMessage) error {
		var e event
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("decode an Event: %w", err)
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].when() < evs[j].when() })
	for _, e := range evs {
		if i, ok := index[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name]; ok {
			out[i].Events = append(out[i].Events, e.Message)
		}
	}
	return out, nil
}

// when orders events: RFC 3339 timestamps sort as strings.
func (e event) when() string {
	if e.LastTimestamp != "" {
		return e.LastTimestamp
	}
	return e.EventTime
}

// CloudControllerEnv reads the hcloud cloud controller's container
// environment from its Deployment; nil, nil when it does not exist.
func (s *Source) CloudControllerEnv(ctx context.Context) (map[string]string, error) {
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string `json:"name"`
						Env  []struct {
							Name      string          `json:"name"`
							Value     string          `json:"value"`
							ValueFrom json.RawMessage `json:"valueFrom"`
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	err := s.get(ctx, "/apis/apps/v1/namespaces/"+ccmNamespace+"/deployments/"+ccmName, &d)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			switch {
			case e.Value != "":
				env[e.Name] = e.Value
			case len(e.ValueFrom) > 0:
				env[e.Name] = "(from valueFrom)"
			}
		}
	}
	return env, nil
}
