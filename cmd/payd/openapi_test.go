package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestOpenAPICommand checks that payd openapi prints the document of each
// mode: /devnet/* only with --dev, and an unknown flag is a usage error.
func TestOpenAPICommand(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, dev := range []bool{false, true} {
		args := []string{"openapi"}
		if dev {
			args = append(args, "--dev")
		}
		var out bytes.Buffer
		if err := run(context.Background(), args, noEnv, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			OpenAPI string         `json:"openapi"`
			Paths   map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("dev=%v: not JSON: %v", dev, err)
		}
		_, lists := doc.Paths["/devnet/clock"]
		if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Paths["/payments"] == nil || lists != dev {
			t.Errorf("dev=%v: openapi %q, %d paths, /devnet/clock listed %v", dev, doc.OpenAPI, len(doc.Paths), lists)
		}
	}
	var u usageError
	err := run(context.Background(), []string{"openapi", "--nope"}, noEnv, io.Discard, io.Discard)
	if !errors.As(err, &u) {
		t.Errorf("unknown flag: %v, want a usage error", err)
	}
}
