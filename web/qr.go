package web

import (
	"encoding/base64"
	"html/template"
	"strconv"

	qrcode "github.com/skip2/go-qrcode"
)

// qrPixels is the size of one QR module in pixels. Whole pixels per module
// keep every module sharp, which wallet cameras need: a QR scaled to a
// fixed width blurred its modules and failed to decode (DEPENDENCIES.md).
const qrPixels = 6

// qrDataURI renders s as a PNG QR code in a data: URI, which the strict
// Content-Security-Policy allows as an image and which needs no request.
// Medium error correction keeps dense EIP-681 URIs scannable at phone size.
func qrDataURI(s string) template.URL {
	if s == "" {
		return ""
	}
	png, err := qrcode.Encode(s, qrcode.Medium, -qrPixels)
	if err != nil {
		return ""
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
}

func itoa(n int) string { return strconv.Itoa(n) }
