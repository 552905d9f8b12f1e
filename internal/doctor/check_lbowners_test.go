package doctor

import (
	"context"
	"sync"
	"testing"
	"time"
)

// readsCloud answers each LoadBalancers call with the next of reads (the
// last one again once they run out).
type readsCloud struct {
	fakeCloud
	mu    sync.Mutex
	reads [][]LoadBalancer
	n     int
}

func (r *readsCloud) LoadBalancers(context.Context) ([]LoadBalancer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(r.n, len(r.reads)-1)
	r.n++
	return r.reads[i], nil
}

func TestLBOwners(t *testing.T) {
	ours := map[string]string{"ohmytalos.io/managed-by": "ohmytalos", "ohmytalos.io/cluster": "demo"}
	lb := func(services []LBListener, targets ...LBTarget) LoadBalancer {
		return LoadBalancer{Name: "demo-ingress", Labels: ours, Services: services, Targets: targets}
	}
	ohmytalos := []LBListener{{Protocol: "tcp", ListenPort: 80, DestinationPort: 80, HealthPort: 80}, {Protocol: "tcp", ListenPort: 443, DestinationPort: 443, HealthPort: 443}}
	ccm := []LBListener{{Protocol: "tcp", ListenPort: 80, DestinationPort: 31080, HealthPort: 31080}, {Protocol: "tcp", ListenPort: 443, DestinationPort: 31443, HealthPort: 31443}}
	selector := LBTarget{Type: "label_selector", Selector: "ohmytalos.io/cluster=demo,ohmytalos.io/ingress=true"}
	worker := LBTarget{Type: "server", ServerName: "demo-worker-1"}
	traefik := LBService{Namespace: "traefik", Name: "traefik", Annotations: map[string]string{AnnLBName: "demo-ingress"}}
	other := LBService{Namespace: "web", Name: "web", Annotations: map[string]string{AnnLBName: "another"}}
	handed := map[string]string{"demo-ingress": "traefik/traefik"}
	cases := []struct {
		name   string
		reads  [][]LoadBalancer
		svcs   []LBService
		handed map[string]string
		status Status
		want   []string
	}{
		{"no Service claims it", [][]LoadBalancer{{lb(ohmytalos, selector)}}, []LBService{other}, nil, StatusPass,
			[]string{"no load balancer is claimed by both"}},
		{"handed over and stable", [][]LoadBalancer{{lb(ccm, worker)}}, []LBService{traefik}, handed, StatusPass,
			[]string{"handed its services and targets to traefik/traefik", "unchanged over"}},
		{"two owners undo each other's services", [][]LoadBalancer{{lb(ohmytalos, selector, worker)}, {lb(ccm, selector, worker)}}, []LBService{traefik}, nil, StatusFail,
			[]string{"demo-ingress: services changed within", "tcp 80->80", "tcp 80->31080", "Service traefik/traefik", AnnLBName, "addons.ingress"}},
		{"targets change while both own them", [][]LoadBalancer{{lb(ccm, selector)}, {lb(ccm, selector, worker)}}, []LBService{traefik}, nil, StatusFail,
			[]string{"targets changed", "server demo-worker-1"}},
		{"both claim it, stable for now", [][]LoadBalancer{{lb(ohmytalos, selector)}}, []LBService{traefik}, nil, StatusWarn,
			[]string{"ohmytalos reconciles its services and targets"}},
		{"not ohmytalos's", [][]LoadBalancer{{{Name: "demo-ingress", Services: ohmytalos}}, {{Name: "demo-ingress", Services: ccm}}}, []LBService{traefik}, nil, StatusPass,
			[]string{"no load balancer is claimed by both"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := &Env{Cloud: &readsCloud{reads: c.reads}, Kube: &fakeKube{services: c.svcs}, HandedOver: c.handed, OwnerReadGap: time.Millisecond}
			expect(t, checkLBOwners(context.Background(), env), c.status, c.want...)
		})
	}
	expect(t, checkLBOwners(context.Background(), &Env{Kube: &fakeKube{}}), StatusSkip, "no Hetzner token")
	expect(t, checkLBOwners(context.Background(), &Env{Cloud: &fakeCloud{}}), StatusSkip, "no kubeconfig")
}
