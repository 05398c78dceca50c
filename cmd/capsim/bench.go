package main

import (
	"errors"
	"io"
)

// runBench is owned by the bench subcommand's author; this placeholder keeps the build green until it lands.
func runBench(args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: not implemented yet")
}
