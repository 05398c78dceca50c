package main

import (
	"errors"
	"fmt"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/plan"
	"github.com/capsim/capsim/sim"
)

// flagHint adds the flag that controls a library limit, or that names
// what is missing, to the error that reports it; the libraries know
// nothing of flags.
func flagHint(err error) error {
	var router *calibrate.RouterError
	var dataset *datasets.UnknownError
	switch {
	case errors.Is(err, calibrate.ErrNoGPU):
		return fmt.Errorf("--gpu is required (known: %s)", calibrate.GPUList())
	case errors.Is(err, sim.ErrTooManyPrompts):
		return fmt.Errorf("%w (--num-prompts, at most %d)", err, sim.MaxNumPrompts)
	case errors.As(err, &router):
		return fmt.Errorf("--router: %w", router)
	case errors.As(err, &dataset):
		return fmt.Errorf("--dataset: %w", dataset)
	case errors.Is(err, plan.ErrTooManyGPUs):
		return fmt.Errorf("%w (--max-gpus)", err)
	case errors.Is(err, calibrate.ErrDPAttention):
		return fmt.Errorf("--dp-attention: %w", err)
	case errors.Is(err, calibrate.ErrStatedFrontend):
		return fmt.Errorf("--frontend-ms: %w", err)
	}
	return err
}
