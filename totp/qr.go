package totp

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// qrPixels is the size of one QR module in the PNG. Whole pixels per
// module keep every module sharp, which phone cameras need: a QR scaled
// to a fixed width blurred its modules and failed to decode
// (DEPENDENCIES.md). An otpauth URI makes a QR of 37 to 45 modules with
// its quiet zone, so the PNG is about 220 to 270 pixels wide.
const qrPixels = 6

// qrImages renders uri as a QR code twice: a PNG in a data: URL and an SVG
// document, drawn from the same modules. Medium error correction, as the
// checkout's QR codes use, reads well from a screen.
func qrImages(uri string) (dataURL, svg string, err error) {
	q, err := qrcode.New(uri, qrcode.Medium)
	if err != nil {
		return "", "", fmt.Errorf("totp: QR code: %w", err)
	}
	png, err := q.PNG(-qrPixels)
	if err != nil {
		return "", "", fmt.Errorf("totp: QR code: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), qrSVG(q.Bitmap()), nil
}

// qrSVG draws the modules (quiet zone included) as one path of
// one-module-high runs on a white square, one user unit per module, with
// crisp edges so no scaling blurs them. It holds no text from the URI, so
// it is safe to inline in a page as it is.
func qrSVG(bits [][]bool) string {
	n := strconv.Itoa(len(bits))
	var d strings.Builder
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&d, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	px := strconv.Itoa(len(bits) * qrPixels)
	return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + n + " " + n + `" width="` + px + `" height="` + px +
		`" shape-rendering="crispEdges" role="img" aria-label="QR code for your authenticator app">` +
		`<rect width="` + n + `" height="` + n + `" fill="#fff"/><path fill="#000" d="` + d.String() + `"/></svg>`
}
