//go:build tools

// Package tools pins the third-party programs capsim's end-to-end tests run.
// It is a separate module so their dependencies stay out of capsim's go.mod.
package tools

import (
	_ "github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim"
)
