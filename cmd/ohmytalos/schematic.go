package main

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/factory"
)

func newSchematicCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "schematic",
		Short: "Work with Talos Image Factory schematics",
	}
	var register bool
	id := &cobra.Command{
		Use:   "id FILE...",
		Short: "Print the Image Factory schematic ID of each file (YAML or JSON), computed offline",
		Long: `id computes each schematic's ID exactly as the Image Factory does (SHA-256 of
its canonical YAML), offline. With --register it also posts the schematic to
the factory (OHMYTALOS_FACTORY_URL, default https://factory.talos.dev) and
fails if the factory's ID differs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSchematicID(cmd, g, args, register)
		},
	}
	id.Flags().BoolVar(&register, "register", false, "also register the schematic with the Image Factory and compare IDs")
	c.AddCommand(id)
	return c
}

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
