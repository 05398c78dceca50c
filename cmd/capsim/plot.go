package main

import (
	"errors"
	"io"
)

// runPlot is owned by the plot subcommand's author; this placeholder keeps the build green until it lands.
func runPlot(args []string, stdout, stderr io.Writer) error {
	return errors.New("plot: not implemented yet")
}
