package main

import (
	"errors"
	"io"
)

// runPlan is owned by the plan subcommand's author; this placeholder keeps the build green until it lands.
func runPlan(args []string, stdout, stderr io.Writer) error {
	return errors.New("plan: not implemented yet")
}
