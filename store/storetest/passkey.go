package storetest

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"payd"
)

// newPasskey returns a passkey of userID with credential id cred.
func newPasskey(userID string, cred []byte, created time.Time) *payd.Passkey {
	return &payd.Passkey{
		ID: payd.NewID(payd.PrefixPasskey), UserID: userID, CredentialID: cred,
		PublicKey:      []byte{0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x00, 0xff},
		AAGUID:         bytes.Repeat([]byte{0xad}, 16),
		SignCount:      1<<32 - 1,
		Transports:     []string{"internal", "hybrid"},
		BackupEligible: true, Name: "Ada's phone", CreatedAt: created,
	}
}

func testPasskey(t *testing.T, b *bundle) {
	t.Run("CreateAndRead", func(t *testing.T) {
		ctx, st := b.setup(t)
		want := newPasskey("usr_ada", []byte{0, 1, 2, 0xfe, 0xff}, t0)
		must(t, st.CreatePasskey(ctx, want))
		got, err := st.PasskeyByCredentialID(ctx, []byte{0, 1, 2, 0xfe, 0xff})
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("PasskeyByCredentialID = %+v, want %+v", got, want)
		}
		_, err = st.PasskeyByCredentialID(ctx, []byte{0, 1, 2})
		wantCode(t, err, payd.ErrNotFound)
		// No transports and no AAGUID read back as nil, not as [""].
		bare := newPasskey("usr_ada", []byte{9}, t0.Add(time.Second))
		bare.Transports, bare.AAGUID, bare.SignCount = nil, []byte{}, 0
		must(t, st.CreatePasskey(ctx, bare))
		got, err = st.PasskeyByCredentialID(ctx, []byte{9})
		must(t, err)
		if got.Transports != nil || len(got.AAGUID) != 0 || got.SignCount != 0 {
			t.Fatalf("bare passkey read back as %+v", got)
		}
	})
	t.Run("CredentialOnOneAccount", func(t *testing.T) {
		ctx, st := b.setup(t)
		must(t, st.CreatePasskey(ctx, newPasskey("usr_ada", []byte("cred-1"), t0)))
		wantCode(t, st.CreatePasskey(ctx, newPasskey("usr_bob", []byte("cred-1"), t0)), payd.ErrConflict)
		wantCode(t, st.CreatePasskey(ctx, newPasskey("usr_ada", []byte("cred-1"), t0)), payd.ErrConflict)
		n, err := st.CountPasskeys(ctx, "usr_bob")
		must(t, err)
		if n != 0 {
			t.Fatalf("CountPasskeys(usr_bob) = %d after a refused create, want 0", n)
		}
	})
	t.Run("ByUserAndCount", func(t *testing.T) {
		ctx, st := b.setup(t)
		var want []string
		for i := range 3 {
			p := newPasskey("usr_ada", []byte{byte(i)}, t0.Add(time.Duration(3-i)*time.Minute))
			must(t, st.CreatePasskey(ctx, p))
			want = append([]string{p.ID}, want...) // made in reverse time order
		}
		must(t, st.CreatePasskey(ctx, newPasskey("usr_bob", []byte{7}, t0)))
		ps, err := st.PasskeysByUser(ctx, "usr_ada")
		must(t, err)
		var got []string
		for _, p := range ps {
			got = append(got, p.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("PasskeysByUser = %v, want oldest first %v", got, want)
		}
		n, err := st.CountPasskeys(ctx, "usr_ada")
		must(t, err)
		if n != 3 {
			t.Fatalf("CountPasskeys = %d, want 3", n)
		}
		ps, err = st.PasskeysByUser(ctx, "usr_nobody")
		must(t, err)
		if len(ps) != 0 {
			t.Fatalf("PasskeysByUser(usr_nobody) = %v, want none", ps)
		}
	})
	t.Run("UpdateUse", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := newPasskey("usr_ada", []byte("cred-u"), t0)
		p.SignCount = 5
		must(t, st.CreatePasskey(ctx, p))
		used := t0.Add(time.Hour)
		must(t, st.UpdatePasskeyUse(ctx, p.ID, 1<<32-1, true, used))
		got, err := st.PasskeyByCredentialID(ctx, []byte("cred-u"))
		must(t, err)
		if got.SignCount != 1<<32-1 || !got.BackupState || got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) {
			t.Fatalf("after UpdatePasskeyUse: %+v", got)
		}
		wantCode(t, st.UpdatePasskeyUse(ctx, payd.NewID(payd.PrefixPasskey), 1, false, used), payd.ErrNotFound)
	})
	t.Run("RenameAndDeleteScopedToUser", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := newPasskey("usr_ada", []byte("cred-r"), t0)
		must(t, st.CreatePasskey(ctx, p))
		wantCode(t, st.RenamePasskey(ctx, "usr_bob", p.ID, "Bob's now"), payd.ErrNotFound)
		must(t, st.RenamePasskey(ctx, "usr_ada", p.ID, "Laptop"))
		got, err := st.PasskeyByCredentialID(ctx, []byte("cred-r"))
		must(t, err)
		if got.Name != "Laptop" {
			t.Fatalf("name = %q after RenamePasskey, want Laptop", got.Name)
		}
		wantCode(t, st.DeletePasskey(ctx, "usr_bob", p.ID), payd.ErrNotFound)
		must(t, st.DeletePasskey(ctx, "usr_ada", p.ID))
		wantCode(t, st.DeletePasskey(ctx, "usr_ada", p.ID), payd.ErrNotFound)
		_, err = st.PasskeyByCredentialID(ctx, []byte("cred-r"))
		wantCode(t, err, payd.ErrNotFound)
		// The credential can be registered again once removed.
		must(t, st.CreatePasskey(ctx, newPasskey("usr_bob", []byte("cred-r"), t0)))
	})
	t.Run("InTx", func(t *testing.T) {
		// The limit check and the create commit together: a rolled-back
		// create leaves nothing.
		ctx, st := b.setup(t)
		errRollback := fmt.Errorf("roll back")
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			n, err := q.CountPasskeys(ctx, "usr_ada")
			if err != nil {
				return err
			}
			if err := payd.PasskeyLimit(n); err != nil {
				return err
			}
			if err := q.CreatePasskey(ctx, newPasskey("usr_ada", []byte("cred-t"), t0)); err != nil {
				return err
			}
			if n, err := q.CountPasskeys(ctx, "usr_ada"); err != nil || n != 1 {
				return fmt.Errorf("count inside the transaction = %d, %v", n, err)
			}
			return errRollback
		})
		if err != errRollback {
			t.Fatalf("Tx = %v, want the rollback error", err)
		}
		_, err = st.PasskeyByCredentialID(ctx, []byte("cred-t"))
		wantCode(t, err, payd.ErrNotFound)
	})
}

func testWebAuthnChallenge(t *testing.T, b *bundle) {
	ch := func(hash string, purpose payd.WebAuthnPurpose) *payd.WebAuthnChallenge {
		return &payd.WebAuthnChallenge{Hash: hash, State: []byte(`{"rpId":"example.com"}`), UserID: "usr_ada",
			Purpose: purpose, Binding: "ses_1", CreatedAt: t0, ExpiresAt: t0.Add(payd.WebAuthnChallengeTTL)}
	}
	t.Run("TakeOnce", func(t *testing.T) {
		ctx, st := b.setup(t)
		want := ch("aa01", payd.WebAuthnStepUp)
		must(t, st.CreateWebAuthnChallenge(ctx, want))
		got, err := st.TakeWebAuthnChallenge(ctx, "aa01")
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("TakeWebAuthnChallenge = %+v, want %+v", got, want)
		}
		_, err = st.TakeWebAuthnChallenge(ctx, "aa01")
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TakeWebAuthnChallenge(ctx, "never-stored")
		wantCode(t, err, payd.ErrNotFound)
		// A discoverable sign-in names no user and no binding.
		anon := ch("aa02", payd.WebAuthnSignin)
		anon.UserID, anon.Binding = "", ""
		must(t, st.CreateWebAuthnChallenge(ctx, anon))
		got, err = st.TakeWebAuthnChallenge(ctx, "aa02")
		must(t, err)
		if !reflect.DeepEqual(got, anon) {
			t.Fatalf("TakeWebAuthnChallenge = %+v, want %+v", got, anon)
		}
	})
	t.Run("DuplicateHash", func(t *testing.T) {
		ctx, st := b.setup(t)
		must(t, st.CreateWebAuthnChallenge(ctx, ch("bb01", payd.WebAuthnRegister)))
		wantCode(t, st.CreateWebAuthnChallenge(ctx, ch("bb01", payd.WebAuthnSignup)), payd.ErrConflict)
	})
	t.Run("ConcurrentTake", func(t *testing.T) {
		ctx, st := b.setup(t)
		const racers = 8
		must(t, st.CreateWebAuthnChallenge(ctx, ch("cc01", payd.WebAuthnSignin)))
		got, errs := parallel(racers, func(int) (*payd.WebAuthnChallenge, error) {
			return st.TakeWebAuthnChallenge(ctx, "cc01")
		})
		won := 0
		for j, err := range errs {
			switch {
			case err == nil && got[j].Hash == "cc01":
				won++
			case payd.IsNotFound(err):
			default:
				t.Fatalf("take %d: %+v, %v", j, got[j], err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of %d concurrent takes won, want 1", won, racers)
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		ctx, st := b.setup(t)
		old := ch("dd01", payd.WebAuthnRegister)
		old.ExpiresAt = t0.Add(time.Minute)
		must(t, st.CreateWebAuthnChallenge(ctx, old))
		must(t, st.CreateWebAuthnChallenge(ctx, ch("dd02", payd.WebAuthnRegister)))
		n, err := st.DeleteExpiredWebAuthnChallenges(ctx, t0.Add(time.Minute))
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteExpiredWebAuthnChallenges removed %d, want 1", n)
		}
		_, err = st.TakeWebAuthnChallenge(ctx, "dd01")
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TakeWebAuthnChallenge(ctx, "dd02")
		must(t, err)
	})
}
