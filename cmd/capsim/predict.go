package main

import (
	"errors"
	"io"
)

// runPredict is owned by the predict subcommand's author; this placeholder keeps the build green until it lands.
func runPredict(args []string, stdout, stderr io.Writer) error {
	return errors.New("predict: not implemented yet")
}
