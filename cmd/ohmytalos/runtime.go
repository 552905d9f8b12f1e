package main

import (
	"context"
	"log/slog"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// runtime is everything a command needs to plan or apply a spec.
type runtime struct {
	env     *engine.Env
	engine  *engine.Engine
	deps    *steps.Deps
	closers []func()
}

func (r *runtime) redact(s string) string { return r.deps.Redact(s) }

// Close releases the sandbox and log file.
func (r *runtime) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// runtime builds the engine, its steps and their clients for a spec.
func (g *globals) runtime(ctx context.Context, s *spec.Spec) (*runtime, error) {
	rt := &runtime{}
	log, closeLog, err := g.logger()
	if err != nil {
		return nil, err
	}
	rt.closers = append(rt.closers, closeLog)
	st, err := g.openState(s.Name)
	if err != nil {
		rt.Close()
		return nil, err
	}
	deps, closeDeps, err := g.deps(ctx, log)
	if err != nil {
		rt.Close()
		return nil, err
	}
	rt.closers = append(rt.closers, closeDeps)
	rt.deps = deps
	rt.env = &engine.Env{Spec: s, State: st, Log: log}
	rt.engine = engine.New(steps.All(deps)...)
	return rt, nil
}

// deps builds the steps' clients: real ones, or the sandbox's.
func (g *globals) deps(ctx context.Context, log *slog.Logger) (*steps.Deps, func(), error) {
	d := &steps.Deps{Log: log, Sandbox: g.sandbox}
	return d, func() {}, nil
}
