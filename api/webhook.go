package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// Webhook endpoints (spec 6, docs/webhooks.md). Delivery, retries, the
// delivery log and test sends are package webhook's and come later.

// webhookListName binds cursors to GET /webhooks.
const webhookListName = "webhooks"

// webhookListParams are the query parameters GET /webhooks takes.
var webhookListParams = []string{"limit", "cursor"}

// Access rules of the webhook routes.
var (
	webhooksRead  = access{area: payd.AreaWebhooks, level: payd.AccessRead}
	webhooksWrite = access{area: payd.AreaWebhooks, level: payd.AccessWrite}
)

// webhookEndpoint is a webhook endpoint on the wire.
type webhookEndpoint struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	URL         string   `json:"url"`
	EventTypes  []string `json:"event_types"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	// Secret is present only in the answers to create and rotate-secret:
	// a secret is shown once, like an API key.
	Secret *string `json:"secret,omitempty"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing; null once it has, or without a rotation.
	PreviousSecretExpiresAt *Time `json:"previous_secret_expires_at"`
	CreatedAt               Time  `json:"created_at"`
	UpdatedAt               Time  `json:"updated_at"`
}

// toWebhookEndpoint renders an endpoint as it stands at now, without its
// secret.
func toWebhookEndpoint(e *payd.WebhookEndpoint, now time.Time) webhookEndpoint {
	return webhookEndpoint{
		ID: e.ID, Kind: "webhook_endpoint", URL: e.URL, EventTypes: e.EventTypes, Description: e.Description,
		Enabled: e.Enabled, PreviousSecretExpiresAt: timePtr(e.PreviousSecretOverlap(now)),
		CreatedAt: Time(e.CreatedAt), UpdatedAt: Time(e.UpdatedAt),
	}
}

// withSecret renders an endpoint with its current secret, for the two
// answers that show it.
func withSecret(e *payd.WebhookEndpoint, now time.Time) webhookEndpoint {
	out := toWebhookEndpoint(e, now)
	secret := e.Secret
	out.Secret = &secret
	return out
}

// createWebhookRequest is the body of POST /webhooks.
type createWebhookRequest struct {
	URL         string   `json:"url"`
	EventTypes  []string `json:"event_types"`
	Description string   `json:"description"`
}

// update returns the request as the fields of a new endpoint; absent
// event_types stays nil, so that the domain reports it missing.
func (req *createWebhookRequest) update() payd.WebhookEndpointUpdate {
	u := payd.WebhookEndpointUpdate{URL: &req.URL, Description: &req.Description}
	if req.EventTypes != nil {
		u.EventTypes = &req.EventTypes
	}
	return u
}

// updateWebhookRequest is the body of PATCH /webhooks/{id}; absent (or
// null) fields stay as they are.
type updateWebhookRequest struct {
	URL         *string   `json:"url"`
	EventTypes  *[]string `json:"event_types"`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

// noStore keeps a response that carries a secret out of every cache.
func noStore(w http.ResponseWriter) { w.Header().Set("Cache-Control", "no-store") }

// createWebhook serves POST /webhooks. The Idempotency-Key is ignored
// (spec 4.8 rule 10): a replay would show the secret again, so a retry
// makes a second endpoint.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var req createWebhookRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	now := s.clock.Now()
	e, err := payd.NewWebhookEndpoint(callOf(r.Context()).biz.ID, req.update(), s.opts.Dev, now)
	if err != nil {
		return err
	}
	noStore(w)
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.CreateWebhookEndpoint(ctx, e); err != nil {
			return nil, err
		}
		return withSecret(e, now), nil
	})
}

// getWebhook serves GET /webhooks/{id}, never with the secret.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	e, err := s.store.WebhookEndpointByID(r.Context(), callOf(r.Context()).biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toWebhookEndpoint(e, s.clock.Now())})
	return nil
}

// updateWebhook serves PATCH /webhooks/{id}: url, event_types,
// description and enabled.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	var req updateWebhookRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	u := payd.WebhookEndpointUpdate{URL: req.URL, EventTypes: req.EventTypes, Description: req.Description, Enabled: req.Enabled}
	return s.changeWebhook(w, r, false, func(e *payd.WebhookEndpoint, now time.Time) error {
		return e.Update(u, s.opts.Dev, now)
	})
}

// rotateWebhookSecret serves POST /webhooks/{id}/rotate-secret: a new
// secret, shown in this answer only, while the old one keeps signing for
// 24 hours. Like create it ignores the Idempotency-Key.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	noStore(w)
	return s.changeWebhook(w, r, true, func(e *payd.WebhookEndpoint, now time.Time) error {
		e.RotateSecret(now)
		return nil
	})
}

// changeWebhook reads the endpoint, applies change and stores the result
// in one transaction, answering the endpoint (with its secret when
// showSecret).
func (s *Server) changeWebhook(w http.ResponseWriter, r *http.Request, showSecret bool,
	change func(e *payd.WebhookEndpoint, now time.Time) error) error {
	biz := callOf(r.Context()).biz
	now := s.clock.Now()
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		e, err := q.WebhookEndpointByID(ctx, biz.ID, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		if err := change(e, now); err != nil {
			return nil, err
		}
		if err := q.UpdateWebhookEndpoint(ctx, e); err != nil {
			return nil, err
		}
		if showSecret {
			return withSecret(e, now), nil
		}
		return toWebhookEndpoint(e, now), nil
	})
}

// deleteWebhook serves DELETE /webhooks/{id}: the endpoint goes with
// everything queued for it; a second DELETE is 404.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	biz := callOf(r.Context()).biz
	id := r.PathValue("id")
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.DeleteWebhookEndpoint(ctx, biz.ID, id); err != nil {
			return nil, err
		}
		return deletedObject{ID: id, Kind: "webhook_endpoint", Deleted: true}, nil
	})
}

// listWebhooks serves GET /webhooks, newest first, without secrets.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	if err := refuseUnknownParams(v, webhookListParams); err != nil {
		return err
	}
	pg, err := parsePage(r.Context(), v, s.cursors, webhookListName)
	if err != nil {
		return err
	}
	f := payd.WebhookEndpointFilter{Limit: pg.Limit + 1}
	if f.AfterCreated, f.AfterID, err = createdPosition(pg.After, payd.PrefixWebhook); err != nil {
		return err
	}
	es, err := s.store.ListWebhookEndpoints(r.Context(), callOf(r.Context()).biz.ID, f)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(es))}
	if len(es) > pg.Limit {
		es = es[:pg.Limit]
		last := es[len(es)-1]
		out.setNext(pg, last.CreatedAt.UnixMicro(), last.ID)
	}
	now := s.clock.Now()
	for _, e := range es {
		out.Data = append(out.Data, toWebhookEndpoint(e, now))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
