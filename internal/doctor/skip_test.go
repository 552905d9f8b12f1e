package doctor

import (
	"context"
	"testing"
)

func TestEnvSkipSkipsWithTheReasonWithoutRunning(t *testing.T) {
	ran := false
	registry := []Check{
		{ID: "needs-spec", Title: "compares with the spec", Run: func(ctx context.Context, env *Env) Result { ran = true; return pass() }},
		{ID: "free", Title: "needs nothing", Run: func(ctx context.Context, env *Env) Result { return pass("fine") }},
	}
	env := &Env{Skip: map[string]string{"needs-spec": "no spec: run the doctor beside ohmytalos.yaml"}}
	rs := runChecks(context.Background(), env, registry, nil, nil)
	if ran {
		t.Error("a skipped check ran")
	}
	if rs[0].ID != "needs-spec" || rs[0].Status != StatusSkip || rs[0].Explanation != "no spec: run the doctor beside ohmytalos.yaml" {
		t.Errorf("skipped result = %+v", rs[0])
	}
	if rs[1].Status != StatusPass {
		t.Errorf("other check = %+v", rs[1])
	}
}
