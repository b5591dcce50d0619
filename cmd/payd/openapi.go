package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"

	"payd/api"
)

// runOpenAPI prints the OpenAPI document a server in the given mode serves
// at GET /api/v1/openapi.json, indented, without starting one: CI lints
// and generates client types from it (see docs/api-conventions.md).
func runOpenAPI(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dev := fs.Bool("dev", false, "the document of a --dev server, with the /devnet/* routes")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, api.OpenAPIDocument(*dev), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := stdout.Write(out.Bytes())
	return err
}
