package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/kubeconfig"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/talos"
)

// secretEnv are the variables whose values are credentials wherever they
// are used: redacted even when no step looked them up.
var secretEnv = []string{"HCLOUD_TOKEN", "BWS_ACCESS_TOKEN", "BW_SESSION", "BW_CLIENTSECRET", "BW_PASSWORD", "TS_AUTHKEY"}

// printsSecrets are the commands whose standard output is a credential on
// purpose (the client configs, the sandbox's export lines): their stdout
// is left as is, their errors and stderr are still redacted.
var printsSecrets = map[string]bool{
	"ohmytalos kubeconfig": true, "ohmytalos talosconfig": true, "ohmytalos sandbox serve": true,
}

// redactedError is a command's error with every known secret replaced;
// errors.Is and errors.As still see the original chain (exit codes,
// state.ErrLocked).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr redacts err's message with everything the run has seen.
func (g *globals) redactErr(err error) error {
	if err == nil {
		return nil
	}
	var re *redactedError
	if errors.As(err, &re) && re == err {
		return err
	}
	return &redactedError{msg: g.secrets.Redact(err.Error()), err: err}
}

// guardOutput is the one place redaction happens for every command: each
// RunE's error is redacted, and its stdout (but for printsSecrets) and
// stderr pass through the redacting writer, JSON documents included.
func (g *globals) guardOutput(c *cobra.Command) {
	for _, v := range secretEnv {
		g.secrets.Add(secrets.NewValue(os.Getenv(v)))
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if run := c.RunE; run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if !printsSecrets[cmd.CommandPath()] && redactable(cmd, cmd.OutOrStdout()) {
					cmd.SetOut(g.secrets.Writer(cmd.OutOrStdout()))
				}
				if redactable(cmd, cmd.ErrOrStderr()) {
					cmd.SetErr(g.secrets.Writer(cmd.ErrOrStderr()))
				}
				err := run(cmd, args)
				g.reportMirror(cmd.ErrOrStderr())
				return g.redactErr(err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(c)
}

// observeSecret adds what a secret blob read from or written to the state
// holds to the redacted values: the bundle's CA keys, tokens and
// encryption secrets, the client keys and tokens of the client configs,
// the whole blob for anything else (the disk passphrase).
func (g *globals) observeSecret(name string, plaintext []byte) {
	var values, keys []string
	var err error
	switch name {
	case "talos-secrets":
		values, keys, err = talos.BundleSecrets(plaintext)
	case "kubeconfig":
		values, keys, err = kubeconfig.Secrets(plaintext)
	case "talosconfig":
		keys, err = talos.TalosconfigSecrets(plaintext)
	default:
		values = []string{string(plaintext)}
	}
	if err != nil { // unreadable: the blob itself is all there is to hide
		values = []string{string(plaintext)}
	}
	for _, v := range values {
		g.secrets.Add(secrets.NewValue(v))
	}
	for _, k := range keys {
		g.secrets.Add(secrets.KeyForms(k)...)
	}
}

// redactable reports whether w may pass through the redacting writer: any
// writer but a terminal, which the wizard, the doctor's screen and the
// colour detection need as the *os.File it is, unless the command prints
// JSON (never drawn as a screen). What reaches a terminal otherwise is
// already redacted by the steps' renderers, and errors always are.
func redactable(cmd *cobra.Command, w any) bool {
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		return true
	}
	return !isTerminal(w)
}
