package main

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/factory"
)

func runSchematicID(cmd *cobra.Command, g *globals, files []string, register bool) error {
	var fc *factory.Client
	if register {
		fc = factory.NewClient(os.Getenv(factory.URLEnv), &http.Client{Timeout: 30 * time.Second})
	}
	out := cmd.OutOrStdout()
	failed := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read schematic: %w", err)
		}
		s, err := factory.Parse(data)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", f, err)
			failed++
			continue
		}
		id, err := s.ID()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if fc != nil {
			got, err := fc.Register(cmd.Context(), s)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			id = got
		}
		if len(files) == 1 {
			fmt.Fprintln(out, id)
		} else {
			fmt.Fprintf(out, "%s  %s\n", id, f)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d schematics could not be read", failed, len(files))
	}
	return nil
}
