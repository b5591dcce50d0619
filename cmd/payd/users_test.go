package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"

	"payd/store/storetest"
)

// TestUsersBootstrap is a closed deployment's bootstrap (issue 18 item
// 11): sign-up paused, a business made with business create, its owner
// made with users create --password-stdin, who then signs in and sees the
// business; users add gives a colleague a role.
func TestUsersBootstrap(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		cli(t, dsn, "pause", "signups", "--reason", "closed deployment")
		devPost(t, s, nil, "/devnet/clock", `{"advance_seconds":2}`, "") // replicas re-read pauses every second
		// Sign-up's three routes are closed.
		for _, p := range []string{"/accounts", "/accounts/verify", "/accounts/verify/resend"} {
			st, body := devPost(t, s, nil, p, `{"email":"x@example.com","password":"correct horse battery","code":"123456"}`,
				devToken(t, s, "signup"))
			if st != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(`"temporarily_unavailable"`)) {
				t.Fatalf("POST %s with signups paused: %d %s", p, st, body)
			}
		}

		var biz newBusiness
		if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Closed Shop", "--email", "shop@example.com", "--json"), &biz); err != nil {
			t.Fatal(err)
		}
		// A weak password is refused, saying why; none is created.
		if _, err := usersCLI(t, dsn, "password1\n", "create", "--email", "owner@example.com", "--name", "Olive",
			"--password-stdin", "--business", biz.BusinessID); err == nil || !strings.Contains(err.Error(), "too common") {
			t.Fatalf("weak password: %v", err)
		}
		out, err := usersCLI(t, dsn, "correct horse battery\r\n", "create", "--email", "owner@example.com", "--name", "Olive",
			"--password-stdin", "--business", biz.BusinessID, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var u newUser
		if err := json.Unmarshal(out, &u); err != nil || !strings.HasPrefix(u.UserID, "usr_") || !u.HasPassword ||
			u.BusinessID == nil || *u.BusinessID != biz.BusinessID || *u.Role != "owner" {
			t.Fatalf("users create printed %s (%v)", out, err)
		}
		if _, err := usersCLI(t, dsn, "", "create", "--email", "OWNER@example.com", "--name", "Again"); err == nil {
			t.Fatal("a second user with the same email was created")
		}

		// The owner signs in with that password and sees the business.
		jar, _ := cookiejar.New(nil)
		st, body := devPost(t, s, jar, "/sessions", `{"email":"owner@example.com","password":"correct horse battery"}`, devToken(t, s, "signin"))
		if st != http.StatusCreated {
			t.Fatalf("sign-in: %d %s", st, body)
		}
		req, _ := http.NewRequest("GET", s.base+"/businesses", nil)
		res, err := (&http.Client{Jar: jar}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(biz.BusinessID)) || !bytes.Contains(body, []byte(`"role":"owner"`)) {
			t.Fatalf("GET /businesses: %d %s", res.StatusCode, body)
		}

		// users add: an existing person gets a role; twice is refused.
		if _, err := usersCLI(t, dsn, "", "create", "--email", "dev@example.com", "--name", "Dev"); err != nil {
			t.Fatal(err)
		}
		out, err = usersCLI(t, dsn, "", "add", "--email", "dev@example.com", "--business", biz.BusinessID, "--role", "developer", "--json")
		if err != nil || !bytes.Contains(out, []byte(`"role":"developer"`)) || !bytes.Contains(out, []byte(`"has_password":false`)) {
			t.Fatalf("users add: %s %v", out, err)
		}
		for _, bad := range [][]string{
			{"add", "--email", "dev@example.com", "--business", biz.BusinessID, "--role", "viewer"},
			{"add", "--email", "nobody@example.com", "--business", biz.BusinessID, "--role", "viewer"},
			{"add", "--email", "dev@example.com", "--business", "biz_missing", "--role", "viewer"},
			{"add", "--email", "dev@example.com", "--business", biz.BusinessID, "--role", "king"},
			{"create", "--email", "new@example.com", "--name", "N", "--role", "owner"},
			{"create", "--email", "new@example.com", "--name", "N", "--password-stdin"},
		} {
			if out, err := usersCLI(t, dsn, "", bad...); err == nil {
				t.Errorf("payd users %v succeeded: %s", bad, out)
			}
		}
	})
}

// usersCLI runs payd users args against dsn with stdin.
func usersCLI(t *testing.T, dsn, stdin string, args ...string) ([]byte, error) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx := withStdin(context.Background(), strings.NewReader(stdin))
	err := run(ctx, append(append([]string{"users"}, args...), "--database", dsn), func(string) string { return "" }, &out, &errb)
	return out.Bytes(), err
}

// devToken gets a dev bot-check token for form.
func devToken(t *testing.T, s *server, form string) string {
	t.Helper()
	st, body := devPost(t, s, nil, "/devnet/challenges", `{"form":"`+form+`"}`, "")
	var v struct{ Data struct{ Token string } }
	if err := json.Unmarshal(body, &v); err != nil || st != http.StatusCreated {
		t.Fatalf("POST /devnet/challenges: %d %s", st, body)
	}
	return v.Data.Token
}

// devPost posts body to the server's path with a bot-check token and a
// cookie jar when given.
func devPost(t *testing.T, s *server, jar http.CookieJar, path, body, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Service-Challenge", token)
	}
	res, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestDevEmailsPage reads a sign-up code on the development page of kept
// emails, served by serve --dev beside the API.
func TestDevEmailsPage(t *testing.T) {
	s := start(t, storetest.SQLiteDSN(t))
	st, body := devPost(t, s, nil, "/accounts", `{"email":"try@example.com","password":"correct horse battery","name":"Try"}`,
		devToken(t, s, "signup"))
	if st != http.StatusAccepted {
		t.Fatalf("sign-up: %d %s", st, body)
	}
	code, page := get(t, strings.TrimSuffix(s.base, "/api/v1")+"/dev/emails?to=try%40example.com", "")
	if code != 200 || !regexp.MustCompile(`(?m)^\d{6}$`).Match(page) || !bytes.Contains(page, []byte("<h1>")) {
		t.Fatalf("GET /dev/emails: %d\n%s", code, page)
	}
}
