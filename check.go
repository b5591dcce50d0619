package payd

import (
	"maps"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText refuses a text field longer than max characters or holding
// control characters; multiline text may hold line breaks and tabs. The
// error is invalid_request naming field.
func CheckText(field, s string, max int, multiline bool) error {
	if n := utf8.RuneCountInString(s); n > max {
		return FieldError(field, "%s is %d characters long; at most %d are allowed", field, n, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return FieldError(field, "%s may not contain the control character %U", field, r)
		}
	}
	return nil
}

// CheckRedirectURL checks an address customers are sent to after paying:
// absolute, http(s) with a host, no user name or password, at most
// MaxURLLength characters, and https unless allowHTTP (development).
func CheckRedirectURL(field, s string, allowHTTP bool) error {
	if len(s) > MaxURLLength {
		return FieldError(field, "%s is longer than %d characters", field, MaxURLLength)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" || strings.ContainsAny(s, " \t\r\n"):
		return FieldError(field, "%s must be an absolute URL such as https://example.com/thanks", field)
	case u.User != nil:
		return FieldError(field, "%s may not contain a user name or password", field)
	case u.Scheme == "https", u.Scheme == "http" && allowHTTP:
		return nil
	}
	return FieldError(field, "%s must use https", field)
}

// plainEmail reports whether s is a plain address such as ada@example.com:
// no display name, no angle brackets, a dot in the domain, at most 254 bytes.
func plainEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " <>\"") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// CheckEmail refuses s unless it is a plain address (plainEmail): the error
// is invalid_request naming field, as every route gives but two.
func CheckEmail(field, s string) error {
	if !plainEmail(s) {
		return FieldError(field, "%q is not a valid email address", s)
	}
	return nil
}

// CheckCustomerEmail is CheckEmail for the two fields where spec 7.3 asks
// for invalid_email instead: a payment's customer_email and a checkout's
// email.
func CheckCustomerEmail(field, s string) error {
	if !plainEmail(s) {
		return &Error{Code: ErrInvalidEmail, Field: field, Message: field + " is not a valid email address"}
	}
	return nil
}

// CheckMetadata checks a payment's metadata (spec 2.2: string to string,
// some key names reserved): at most MaxMetadataKeys keys; keys of 1 to
// MaxMetadataKeyLen letters, digits, '_', '-', '.' or ':', none starting
// with a reserved prefix; values of at most MaxMetadataValueLen characters.
// Keys are restricted so that every key can be written as metadata[key] in
// a query string and read back unchanged.
func CheckMetadata(m map[string]string) error {
	if len(m) > MaxMetadataKeys {
		return FieldError("metadata", "metadata may have at most %d keys", MaxMetadataKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkMetadataKey(k); err != nil {
			return err
		}
		if err := CheckText("metadata."+k, m[k], MaxMetadataValueLen, true); err != nil {
			return err
		}
	}
	return nil
}

// checkMetadataKey applies CheckMetadata's rules to one key.
func checkMetadataKey(k string) error {
	if k == "" || len(k) > MaxMetadataKeyLen {
		return FieldError("metadata", "metadata keys must be 1 to %d characters", MaxMetadataKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isKeyByte(c) {
			return FieldError("metadata", "metadata key %q may hold only letters, digits, '_', '-', '.' and ':'", k)
		}
	}
	for _, prefix := range ReservedMetadataPrefixes {
		if strings.HasPrefix(strings.ToLower(k), prefix) {
			return FieldError("metadata", "metadata key %q is reserved: keys starting with %q are payd's own", k, prefix)
		}
	}
	return nil
}

// isKeyByte reports whether c may appear in a metadata key.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':'
}

// checkReference allows no reference, or 1 to MaxReferenceLen characters
// without control characters or surrounding spaces, because a reference is
// matched exactly and an invisible difference would defeat rule 11.
func checkReference(ref string) error {
	if ref != strings.TrimSpace(ref) {
		return FieldError("reference", "reference must not start or end with spaces")
	}
	return CheckText("reference", ref, MaxReferenceLen, false)
}
