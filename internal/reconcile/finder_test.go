package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// lookup is an in-memory Lookup of networks that counts its calls and
// filters by the selector's labels as Hetzner does.
type lookup struct {
	nets  []*hcloud.Network
	calls int
}

func (l *lookup) GetByID(_ context.Context, id int64) (*hcloud.Network, *hcloud.Response, error) {
	l.calls++
	for _, n := range l.nets {
		if n.ID == id {
			return n, nil, nil
		}
	}
	return nil, nil, nil
}

func (l *lookup) AllWithOpts(_ context.Context, o hcloud.NetworkListOpts) ([]*hcloud.Network, error) {
	l.calls++
	var out []*hcloud.Network
	for _, n := range l.nets {
		if strings.Contains(o.LabelSelector, "cluster="+n.Labels["cluster"]) {
			out = append(out, n)
		}
	}
	return out, nil
}

// owner owns the labels with id=mine.
type owner struct{}

func (owner) Owns(l map[string]string) bool { return l["id"] == "mine" }

func (owner) Foreign(kind string, names []string, _ map[string]string) error {
	return errors.New(kind + " " + strings.Join(names, ", ") + " is another's")
}

func finder(l *lookup) Finder[*hcloud.Network, hcloud.NetworkListOpts] {
	return NewKindFinder("network", l, func(o hcloud.ListOpts) hcloud.NetworkListOpts { return hcloud.NetworkListOpts{ListOpts: o} },
		func(n *hcloud.Network) Meta { return Meta{ID: n.ID, Name: n.Name, Labels: n.Labels} })
}

func net(id int64, name, cluster, owner string) *hcloud.Network {
	return &hcloud.Network{ID: id, Name: name, Labels: map[string]string{"cluster": cluster, "id": owner}}
}

func TestFindByStoredIDThenLabels(t *testing.T) {
	ctx := context.Background()
	l := &lookup{nets: []*hcloud.Network{net(1, "a", "demo", "mine"), net(2, "b", "other", "mine")}}
	f := finder(l)
	got, found, err := f.Find(ctx, Query{ID: 2, Selector: "cluster=demo", Owner: owner{}})
	if err != nil || !found || got.ID != 2 {
		t.Fatalf("by stored ID: %v %v %v, want network 2", got, found, err)
	}
	got, found, err = f.Find(ctx, Query{ID: 9, Selector: "cluster=demo", Owner: owner{}})
	if err != nil || !found || got.ID != 1 {
		t.Fatalf("stored ID gone: %v %v %v, want network 1 by labels", got, found, err)
	}
	_, found, err = f.Find(ctx, Query{Selector: "cluster=none", Owner: owner{}})
	if err != nil || found {
		t.Fatalf("no match: found %v, %v", found, err)
	}
}

func TestFindRefusesForeignAndTwoMatches(t *testing.T) {
	ctx := context.Background()
	f := finder(&lookup{nets: []*hcloud.Network{net(1, "a", "demo", "theirs")}})
	if _, _, err := f.Find(ctx, Query{Selector: "cluster=demo", Owner: owner{}}); err == nil || !strings.Contains(err.Error(), "network a (1) is another's") {
		t.Fatalf("foreign match: %v, want the owner's error", err)
	}
	f = finder(&lookup{nets: []*hcloud.Network{net(1, "a", "demo", "mine"), net(2, "b", "demo", "mine")}})
	if _, _, err := f.Find(ctx, Query{Selector: "cluster=demo", Owner: owner{}}); err == nil || !strings.Contains(err.Error(), "2 networks match") {
		t.Fatalf("two matches: %v, want an error naming both", err)
	}
}

func TestListedAnswersWithoutAskingAndRefindAsks(t *testing.T) {
	ctx := context.Background()
	l := &lookup{nets: []*hcloud.Network{net(1, "a", "demo", "mine")}}
	f := finder(l).Listed([]*hcloud.Network{net(1, "a", "demo", "mine")})
	if got, found, err := f.Find(ctx, Query{ID: 1, Selector: "cluster=demo", Owner: owner{}}); err != nil || !found || got.ID != 1 || l.calls != 0 {
		t.Fatalf("listed: %v %v %v after %d calls, want network 1 and no call", got, found, err, l.calls)
	}
	if _, found, err := f.Find(ctx, Query{Selector: "cluster=demo", Owner: owner{}}); err != nil || !found || l.calls != 0 {
		t.Fatalf("listed by labels: %v %v after %d calls", found, err, l.calls)
	}
	if _, found, err := f.Refind(ctx, Query{Selector: "cluster=demo", Owner: owner{}}); err != nil || !found || l.calls != 1 {
		t.Fatalf("refind: %v %v after %d calls, want one list request", found, err, l.calls)
	}
}
