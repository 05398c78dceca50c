package main

import (
	"errors"
	"io"
)

// runData is owned by the data subcommand's author; this placeholder keeps the build green until it lands.
func runData(args []string, stdout, stderr io.Writer) error {
	return errors.New("data: not implemented yet")
}
