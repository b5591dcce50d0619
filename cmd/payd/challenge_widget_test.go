package main

import (
	"errors"
	"testing"

	"payd/web"
)

// TestChallengeWidget: the dashboard shows a provider's widget only with
// its --challenge and --challenge-site-key; a site key alone, or one that
// could break out of an attribute, is a usage error.
func TestChallengeWidget(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want web.ChallengeWidget
	}{
		{Config{Dev: true}, web.ChallengeWidget{Kind: "dev"}},
		{Config{Challenge: "turnstile:s", ChallengeSiteKey: "0x4AAA"}, web.ChallengeWidget{Kind: "turnstile", SiteKey: "0x4AAA"}},
		{Config{Challenge: "hcaptcha:s", ChallengeSiteKey: "10000000-ffff"}, web.ChallengeWidget{Kind: "hcaptcha", SiteKey: "10000000-ffff"}},
		{Config{Challenge: "turnstile:s"}, web.ChallengeWidget{}},
		{Config{Challenge: "none"}, web.ChallengeWidget{}},
	} {
		if got := challengeWidget(&tt.cfg); got != tt.want {
			t.Errorf("%+v: %+v, want %+v", tt.cfg, got, tt.want)
		}
	}
	for _, tt := range []struct {
		key, provider string
		ok            bool
	}{
		{"0x4AAA", "turnstile", true}, {"", "", true}, {"0x4AAA", "", false}, {"0x4AAA", "none", false},
		{`a"b`, "hcaptcha", false}, {"a b", "turnstile", false},
	} {
		err := checkSiteKey(&Config{ChallengeSiteKey: tt.key}, tt.provider)
		var u usageError
		if tt.ok != (err == nil) || err != nil && !errors.As(err, &u) {
			t.Errorf("%q with %q: %v", tt.key, tt.provider, err)
		}
	}
}
