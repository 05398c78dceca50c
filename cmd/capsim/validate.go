package main

import (
	"errors"
	"io"
)

// runValidate is owned by the validate subcommand's author; this placeholder keeps the build green until it lands.
func runValidate(args []string, stdout, stderr io.Writer) error {
	return errors.New("validate: not implemented yet")
}
