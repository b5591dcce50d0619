package payd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"slices"
	"strings"
	"time"
)

// KeyKind says what an API key may do: a secret key can do everything, a
// restricted key only what its Permissions grant, and a publishable key
// identifies a business to public routes but authenticates nothing.
type KeyKind string

// The kinds of API key, with their wire prefixes.
const (
	KeySecret      KeyKind = "secret"
	KeyRestricted  KeyKind = "restricted"
	KeyPublishable KeyKind = "publishable"
)

var keyPrefixes = map[KeyKind]string{KeySecret: "sk", KeyRestricted: "rk", KeyPublishable: "pk"}

// Mode separates live keys from test keys. Test and live keys share one
// business's data; on a live business test keys cannot move real money.
type Mode string

// The two key modes.
const (
	ModeLive Mode = "live"
	ModeTest Mode = "test"
)

// Area is a part of the API that a restricted key can be granted.
type Area string

// The areas of CONTRACT.md.
const (
	AreaPayments         Area = "payments"
	AreaCustomers        Area = "customers"
	AreaLinks            Area = "links"
	AreaWebhooks         Area = "webhooks"
	AreaCheckoutSettings Area = "checkout_settings"
	AreaWallet           Area = "wallet"
	AreaMetrics          Area = "metrics"
)

// Areas lists every area in a stable order.
var Areas = []Area{AreaPayments, AreaCustomers, AreaLinks, AreaWebhooks, AreaCheckoutSettings, AreaWallet, AreaMetrics}

// Access is a level of access to an area; write implies read.
type Access int

// The access levels, ordered so that a higher level includes the lower.
const (
	AccessNone Access = iota
	AccessRead
	AccessWrite
)

// String returns the level's wire name.
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	}
	return "none"
}

// Permissions maps areas to the access a restricted key has.
type Permissions map[Area]Access

// ParsePermissions parses "payments:read,customers:write". Unknown areas or
// levels and repeated areas are refused with an invalid_request error.
func ParsePermissions(s string) (Permissions, error) {
	p := Permissions{}
	if strings.TrimSpace(s) == "" {
		return nil, FieldError("permissions", "at least one permission is required, such as payments:read")
	}
	for _, item := range strings.Split(s, ",") {
		area, level, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok || !slices.Contains(Areas, Area(area)) {
			return nil, FieldError("permissions", "%q is not AREA:LEVEL with a known area", item)
		}
		if _, dup := p[Area(area)]; dup {
			return nil, FieldError("permissions", "area %q is named twice", area)
		}
		switch level {
		case "read":
			p[Area(area)] = AccessRead
		case "write":
			p[Area(area)] = AccessWrite
		default:
			return nil, FieldError("permissions", "level %q is neither read nor write", level)
		}
	}
	return p, nil
}

// String formats p the way ParsePermissions reads it, in the order of Areas.
func (p Permissions) String() string {
	var parts []string
	for _, a := range Areas {
		if lvl := p[a]; lvl != AccessNone {
			parts = append(parts, string(a)+":"+lvl.String())
		}
	}
	return strings.Join(parts, ",")
}

// APIKey is a stored key. Only the SHA-256 of the secret is kept: keys carry
// 190 bits of randomness, so a fast hash cannot be searched backwards.
type APIKey struct {
	ID          string
	BusinessID  string
	Kind        KeyKind
	Mode        Mode
	Permissions Permissions // restricted keys only
	Hash        string      // hex SHA-256 of the whole key
	Hint        string      // prefix and last four characters, for people
	Name        string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// Can reports whether the key may use area at level.
func (k *APIKey) Can(area Area, level Access) bool {
	switch k.Kind {
	case KeySecret:
		return true
	case KeyRestricted:
		return k.Permissions[area] >= level
	}
	return false
}

// CanReadAny reports whether the key can read at least one of areas.
func (k *APIKey) CanReadAny(areas ...Area) bool {
	return slices.ContainsFunc(areas, func(a Area) bool { return k.Can(a, AccessRead) })
}

const (
	keyRandomLen   = 32
	keyChecksumLen = 6
)

// NewAPIKey makes a key of the given kind and mode for a business and returns
// the secret text (shown once) with the record to store.
func NewAPIKey(businessID string, kind KeyKind, mode Mode, perms Permissions, now time.Time) (string, *APIKey) {
	body := keyPrefixes[kind] + "_" + string(mode) + "_" + RandomString(keyRandomLen)
	secret := body + keyChecksum(body)
	k := &APIKey{
		ID: NewID(PrefixAPIKey), BusinessID: businessID, Kind: kind, Mode: mode,
		Hash: HashAPIKey(secret), Hint: secret[:len(body)-keyRandomLen] + "…" + secret[len(secret)-4:],
		CreatedAt: now,
	}
	if kind == KeyRestricted {
		k.Permissions = perms
	}
	return secret, k
}

// ParseAPIKey checks that s has the shape of a payd key (typed prefix,
// base62 body, valid checksum) and returns its kind and mode. It lets a
// scanner recognise a leaked key and lets the server refuse a mistyped one
// without a database query.
func ParseAPIKey(s string) (KeyKind, Mode, bool) {
	if len(s) < 8+keyRandomLen+keyChecksumLen || len(s) > 8+keyRandomLen+keyChecksumLen {
		return "", "", false
	}
	var kind KeyKind
	for k, p := range keyPrefixes {
		if strings.HasPrefix(s, p+"_") {
			kind = k
		}
	}
	mode := Mode(s[3:7])
	if kind == "" || (mode != ModeLive && mode != ModeTest) || s[7] != '_' {
		return "", "", false
	}
	body, sum := s[:len(s)-keyChecksumLen], s[len(s)-keyChecksumLen:]
	if !HasPrefix(s, s[:8]) || keyChecksum(body) != sum {
		return "", "", false
	}
	return kind, mode, true
}

// keyChecksum is the CRC-32 of body in six base62 digits.
func keyChecksum(body string) string {
	n := uint64(crc32.ChecksumIEEE([]byte(body)))
	out := make([]byte, keyChecksumLen)
	for i := keyChecksumLen - 1; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}

// HashAPIKey returns the hex SHA-256 under which a key is stored and found.
func HashAPIKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// KeyRollOverlap is how long a rolled key's old secret keeps working, as a
// rotated webhook secret does (spec 8.1): long enough to deploy the new
// one everywhere (docs/auth.md).
const KeyRollOverlap = 24 * time.Hour

// MaxKeyName bounds a key's name.
const MaxKeyName = 100

// Revoked reports whether the key has stopped working at now: revoked, or
// rolled more than KeyRollOverlap ago.
func (k *APIKey) Revoked(now time.Time) bool {
	return k.RevokedAt != nil && !now.Before(*k.RevokedAt)
}

// Changeable refuses a change to a publishable key (publishable_key: it has
// no name, permissions or secret to change) and to a key that is revoked or
// rolled, even while its old secret still works (api_key_revoked).
func (k *APIKey) Changeable() error {
	if k.Kind == KeyPublishable {
		return Errorf(ErrPublishableKey, "a publishable key has no name, permissions or secret to change")
	}
	if k.RevokedAt != nil {
		return Errorf(ErrAPIKeyRevoked, "this key is revoked or rolled; create a new key instead")
	}
	return nil
}

// KeyRequest is what a person asks for when creating or changing a key
// from the dashboard; nil fields are left as they are.
type KeyRequest struct {
	Name        *string
	Kind        *KeyKind
	Mode        *Mode
	Permissions map[string]string // area to "read" or "write"; restricted keys only
}

// NewDashboardKey makes a secret or restricted key as req asks (kind and
// mode required, permissions exactly for restricted keys) and returns its
// secret, shown once, with the record to store.
func NewDashboardKey(businessID string, req KeyRequest, now time.Time) (string, *APIKey, error) {
	if req.Kind == nil || (*req.Kind != KeySecret && *req.Kind != KeyRestricted) {
		return "", nil, FieldError("kind", "kind must be secret or restricted")
	}
	if req.Mode == nil || (*req.Mode != ModeLive && *req.Mode != ModeTest) {
		return "", nil, FieldError("mode", "mode must be live or test")
	}
	perms, err := req.permissions(*req.Kind)
	if err != nil {
		return "", nil, err
	}
	secret, k := NewAPIKey(businessID, *req.Kind, *req.Mode, perms, now)
	if req.Name != nil {
		if k.Name, err = keyName(*req.Name); err != nil {
			return "", nil, err
		}
	}
	return secret, k, nil
}

// Update applies req's name and permissions to k (kind and mode never
// change): publishable_key, api_key_revoked, or invalid_request.
func (k *APIKey) Update(req KeyRequest) error {
	if err := k.Changeable(); err != nil {
		return err
	}
	if req.Kind != nil || req.Mode != nil {
		return FieldError("kind", "a key's kind and mode never change; create a new key")
	}
	if req.Permissions != nil {
		perms, err := req.permissions(k.Kind)
		if err != nil {
			return err
		}
		k.Permissions = perms
	}
	if req.Name != nil {
		name, err := keyName(*req.Name)
		if err != nil {
			return err
		}
		k.Name = name
	}
	return nil
}

// permissions reads req's permissions for a key of kind: required and
// non-empty for a restricted key, absent for a secret key.
func (req KeyRequest) permissions(kind KeyKind) (Permissions, error) {
	if kind != KeyRestricted {
		if req.Permissions != nil {
			return nil, FieldError("permissions", "only restricted keys take permissions; a secret key can do everything")
		}
		return nil, nil
	}
	if len(req.Permissions) == 0 {
		return nil, FieldError("permissions", "a restricted key needs at least one permission, such as {\"payments\": \"read\"}")
	}
	items := make([]string, 0, len(req.Permissions))
	for area, level := range req.Permissions {
		if strings.ContainsAny(area, ":,") || strings.ContainsAny(level, ":,") {
			return nil, FieldError("permissions", "%q: %q is not a known area and level", area, level)
		}
		items = append(items, area+":"+level)
	}
	slices.Sort(items)
	return ParsePermissions(strings.Join(items, ","))
}

// keyName trims and checks a key's name.
func keyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	return name, CheckText("name", name, MaxKeyName, false)
}

// Roll makes k's successor, with the same kind, mode, name and
// permissions and a new secret, and ends k's secret KeyRollOverlap from
// now. It returns the new secret, shown once, and the new key.
func (k *APIKey) Roll(now time.Time) (string, *APIKey, error) {
	if err := k.Changeable(); err != nil {
		return "", nil, err
	}
	secret, next := NewAPIKey(k.BusinessID, k.Kind, k.Mode, k.Permissions, now)
	next.Name = k.Name
	end := now.Add(KeyRollOverlap)
	k.RevokedAt = &end
	return secret, next, nil
}

// KeyStore keeps API keys.
type KeyStore interface {
	// CreateAPIKey stores a new key.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// APIKeyByHash returns the key with that hash, revoked or not; not_found otherwise.
	APIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// APIKeyByID returns the business's key, revoked or not; not_found otherwise.
	APIKeyByID(ctx context.Context, businessID, id string) (*APIKey, error)
	// ListAPIKeys lists the business's keys, revoked ones too, newest first.
	ListAPIKeys(ctx context.Context, businessID string) ([]*APIKey, error)
	// UpdateAPIKey writes a key's name and permissions; not_found if the
	// business has no such key.
	UpdateAPIKey(ctx context.Context, k *APIKey) error
	// RevokeAPIKey makes a key stop working at at, or keeps the earlier
	// time it already stops at (a key rolled to end tomorrow and revoked
	// now ends now; revoking twice keeps the first time); not_found if the
	// business has no such key.
	RevokeAPIKey(ctx context.Context, businessID, id string, at time.Time) error
	// EndLiveAPIKey sets when a key that has no end yet stops working (a
	// roll's overlap), in one statement: conflict when it already has one
	// (revoked, or rolled by a racing request), so a key is rolled once;
	// not_found if the business has no such key.
	EndLiveAPIKey(ctx context.Context, businessID, id string, at time.Time) error
}
