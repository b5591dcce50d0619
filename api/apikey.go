package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// API keys over HTTP (spec 5, 7.6; docs/auth.md "Managing keys"): the
// dashboard lists, creates, renames, rolls and revokes a business's keys.
// Keys never manage keys (session_required), and a person manages only
// keys within their role (payd.MemberRole.Covers).

// Access rules of the key routes: a session whose role manages keys.
var (
	keysManage = access{sessionOnly: true, may: payd.MemberRole.ManagesKeys}
)

// apiKey is a key on the wire: never its secret, but in the answers to
// create and roll, which show it once.
type apiKey struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Mode string `json:"mode"`
	Name string `json:"name"`
	// Hint is the prefix and last four characters, for people.
	Hint string `json:"hint"`
	// Permissions maps areas to read or write; null unless restricted.
	Permissions map[string]string `json:"permissions"`
	CreatedAt   Time              `json:"created_at"`
	// RevokedAt is when the key stops (or stopped) working: a rolled key
	// keeps working until then.
	RevokedAt *Time   `json:"revoked_at"`
	Secret    *string `json:"secret,omitempty"`
}

func toAPIKey(k *payd.APIKey) apiKey {
	out := apiKey{ID: k.ID, Kind: string(k.Kind), Mode: string(k.Mode), Name: k.Name, Hint: k.Hint,
		CreatedAt: Time(k.CreatedAt), RevokedAt: timePtr(k.RevokedAt)}
	if k.Kind == payd.KeyRestricted {
		out.Permissions = map[string]string{}
		for a, lvl := range k.Permissions {
			if lvl != payd.AccessNone {
				out.Permissions[string(a)] = lvl.String()
			}
		}
	}
	return out
}

// keyRequest is the body of POST /api-keys and PATCH /api-keys/{id}.
type keyRequest struct {
	Name        *string           `json:"name"`
	Kind        *string           `json:"kind"`
	Mode        *string           `json:"mode"`
	Permissions map[string]string `json:"permissions"`
}

func (req *keyRequest) domain() payd.KeyRequest {
	out := payd.KeyRequest{Name: req.Name, Permissions: req.Permissions}
	if req.Kind != nil {
		k := payd.KeyKind(*req.Kind)
		out.Kind = &k
	}
	if req.Mode != nil {
		m := payd.Mode(*req.Mode)
		out.Mode = &m
	}
	return out
}

// beyondRole is permission_denied for a key that could do more than the
// person's role.
func beyondRole(role payd.MemberRole) error {
	return payd.Errorf(payd.ErrPermissionDenied, "as %s you can manage only keys that do no more than your role allows", role)
}

// listAPIKeys serves GET /api-keys: every key of the business, revoked
// ones too, newest first, never a secret.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.store.ListAPIKeys(r.Context(), callOf(r.Context()).biz.ID)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, toAPIKey(k))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// createAPIKey serves POST /api-keys: a secret or restricted key, its
// secret shown in this answer only (the Idempotency-Key is ignored, as for
// POST /webhooks: a replay would show the secret again).
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var req keyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c := callOf(r.Context())
	secret, k, err := payd.NewDashboardKey(c.biz.ID, req.domain(), s.clock.Now())
	if err != nil {
		return err
	}
	if !c.role.Covers(k) {
		return beyondRole(c.role)
	}
	if err := s.store.CreateAPIKey(r.Context(), k); err != nil {
		return err
	}
	out := toAPIKey(k)
	out.Secret = &secret
	noStore(w)
	writeJSON(w, http.StatusCreated, single{out})
	return nil
}

// updateAPIKey serves PATCH /api-keys/{id}: name and permissions.
func (s *Server) updateAPIKey(w http.ResponseWriter, r *http.Request) error {
	var req keyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	var hash string
	err := s.changeAPIKey(w, r, func(ctx context.Context, q payd.Queries, k *payd.APIKey, role payd.MemberRole) (apiKey, error) {
		if err := k.Update(req.domain()); err != nil {
			return apiKey{}, err
		}
		if !role.Covers(k) {
			return apiKey{}, beyondRole(role)
		}
		hash = k.Hash
		return toAPIKey(k), q.UpdateAPIKey(ctx, k)
	})
	if hash != "" {
		s.keys.forget(hash) // narrowed permissions apply here at once
	}
	return err
}

// rollAPIKey serves POST /api-keys/{id}/roll: a new key with the same
// kind, mode, name and permissions, its secret shown once, while the old
// secret keeps working for payd.KeyRollOverlap (like a rotated webhook
// secret) so that it can be replaced everywhere without an outage.
func (s *Server) rollAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	noStore(w)
	now := s.clock.Now()
	return s.changeAPIKey(w, r, func(ctx context.Context, q payd.Queries, k *payd.APIKey, _ payd.MemberRole) (apiKey, error) {
		secret, next, err := k.Roll(now)
		if err != nil {
			return apiKey{}, err
		}
		// The old key gets its end first, only if it has none: of two
		// racing rolls one wins, and the other makes no second successor.
		if err := q.EndLiveAPIKey(ctx, k.BusinessID, k.ID, *k.RevokedAt); payd.ErrorCode(err) == payd.ErrConflict {
			return apiKey{}, payd.Errorf(payd.ErrAPIKeyRevoked, "this key was rolled or revoked meanwhile")
		} else if err != nil {
			return apiKey{}, err
		}
		if err := q.CreateAPIKey(ctx, next); err != nil {
			return apiKey{}, err
		}
		out := toAPIKey(next)
		out.Secret = &secret
		return out, nil
	})
}

// revokeAPIKey serves POST /api-keys/{id}/revoke: the key stops working
// now, on this replica at once and on the others within the key cache's
// lifetime; a rolled key's remaining overlap ends too. The key stays
// listed, with revoked_at.
func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	now := s.clock.Now()
	var hash string
	err := s.changeAPIKey(w, r, func(ctx context.Context, q payd.Queries, k *payd.APIKey, _ payd.MemberRole) (apiKey, error) {
		if k.Kind == payd.KeyPublishable {
			return apiKey{}, payd.Errorf(payd.ErrPublishableKey, "a publishable key only names the business to public pages; it cannot be revoked")
		}
		if k.Revoked(now) {
			return apiKey{}, payd.Errorf(payd.ErrAPIKeyRevoked, "this key is already revoked")
		}
		k.RevokedAt, hash = &now, k.Hash
		return toAPIKey(k), q.RevokeAPIKey(ctx, k.BusinessID, k.ID, now)
	})
	if hash != "" {
		s.keys.forget(hash)
	}
	return err
}

// changeAPIKey reads the business's key, refuses one beyond the person's
// role, and applies change in one transaction, answering what it returns.
func (s *Server) changeAPIKey(w http.ResponseWriter, r *http.Request,
	change func(ctx context.Context, q payd.Queries, k *payd.APIKey, role payd.MemberRole) (apiKey, error)) error {
	c := callOf(r.Context())
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		k, err := q.APIKeyByID(ctx, c.biz.ID, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		if !c.role.Covers(k) {
			return nil, beyondRole(c.role)
		}
		return change(ctx, q, k, c.role)
	})
}

// keyStopsBy is when a cached key must be looked up again: after the
// cache's lifetime, or when the key stops working, whichever is first.
func keyStopsBy(k *payd.APIKey, until time.Time) time.Time {
	if k.RevokedAt != nil && k.RevokedAt.Before(until) {
		return *k.RevokedAt
	}
	return until
}
