package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"payd"
	"payd/clock"
	"payd/password"
)

// usersUsage is the synopsis of the users commands.
const usersUsage = `usage: payd users create --email EMAIL --name NAME [--password-stdin] [--business BIZ_ID [--role owner]] [--json]
       payd users add --email EMAIL --business BIZ_ID --role owner|admin|developer|viewer [--json]`

// newUser is what `users create` and `users add` print.
type newUser struct {
	UserID      string  `json:"user_id"`
	Email       string  `json:"email"`
	Name        string  `json:"name"`
	HasPassword bool    `json:"has_password"`
	BusinessID  *string `json:"business_id"`
	Role        *string `json:"role"`
}

// stdinKey carries the standard input in the context: run's signature
// has none, and only users create reads it.
type stdinKey struct{}

// withStdin returns ctx carrying r as the standard input.
func withStdin(ctx context.Context, r io.Reader) context.Context {
	return context.WithValue(ctx, stdinKey{}, r)
}

// stdinOf returns the standard input ctx carries, os.Stdin when none.
func stdinOf(ctx context.Context) io.Reader {
	if r, ok := ctx.Value(stdinKey{}).(io.Reader); ok {
		return r
	}
	return os.Stdin
}

// runUsers creates dashboard users from the command line, so that a
// deployment with sign-up paused (payd pause signups) can still get its
// first owner (docs/operations.md).
func runUsers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" && args[0] != "add" {
		return usagef("%s", usersUsage)
	}
	sub := args[0]
	var cfg Config
	fs := cfg.newFlagSet("users "+sub, stderr)
	email := fs.String("email", "", "the person's email address, with which they sign in")
	name := fs.String("name", "", "the person's name (create)")
	pwStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input (create)")
	biz := fs.String("business", "", "make the person a member of this business")
	role := fs.String("role", "", "their role in --business: owner, admin, developer or viewer (create: default owner)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:], getenv); err != nil {
		return err
	}
	if sub == "add" && (*biz == "" || *role == "") {
		return usagef("users add needs --business and --role\n%s", usersUsage)
	}
	if sub == "add" && (*name != "" || *pwStdin) {
		return usagef("users add takes no --name or --password-stdin: the person exists\n%s", usersUsage)
	}
	if *role != "" && *biz == "" {
		return usagef("--role needs --business")
	}
	if *biz != "" && *role == "" {
		*role = string(payd.RoleOwner)
	}
	var pw string
	if *pwStdin {
		var err error
		if pw, err = readPasswordLine(stdinOf(ctx)); err != nil {
			return err
		}
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	var out *newUser
	if sub == "create" {
		out, err = createUser(ctx, db, *email, *name, pw, *pwStdin, *biz, *role)
	} else {
		out, err = addMember(ctx, db, *email, *biz, *role)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "user     %s\nemail    %s\n", out.UserID, out.Email)
	if out.BusinessID != nil {
		fmt.Fprintf(stdout, "business %s\nrole     %s\n", *out.BusinessID, *out.Role)
	}
	return nil
}

// readPasswordLine reads the password: the first line of r, without its
// line ending. A password is never a flag: flags show in ps and in shell
// history.
func readPasswordLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4*payd.MaxPasswordLength+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", usagef("--password-stdin: standard input has no password on its first line")
	}
	return line, nil
}

// createUser stores a new user, with a password hashed as sign-up does
// (the strength rules on the NFKC form, argon2id) and, with biz, their
// membership, in one transaction.
func createUser(ctx context.Context, db payd.Store, email, name, pw string, withPassword bool, biz, role string) (*newUser, error) {
	now := clock.Real{}.Now()
	hash := ""
	if withPassword {
		pw = password.Normalize(pw)
		if err := payd.CheckPassword(pw, email); err != nil {
			return nil, err
		}
		var err error
		if hash, err = password.NewHasher(password.Config{}).Hash(ctx, pw); err != nil {
			return nil, err
		}
	}
	u, err := payd.NewUser(email, name, hash, now)
	if err != nil {
		return nil, err
	}
	var m *payd.Membership
	if biz != "" {
		if m, err = membershipOf(ctx, db, biz, u.ID, role); err != nil {
			return nil, err
		}
		m.CreatedAt = now
	}
	err = db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.CreateUser(ctx, u); err != nil {
			return err
		}
		if m != nil {
			return q.AddMember(ctx, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return userOut(u, m), nil
}

// addMember makes an existing user a member of a business.
func addMember(ctx context.Context, db payd.Store, email, biz, role string) (*newUser, error) {
	u, err := db.UserByEmail(ctx, email)
	if payd.IsNotFound(err) {
		return nil, fmt.Errorf("no user has the email %s: payd users create makes one", email)
	} else if err != nil {
		return nil, err
	}
	m, err := membershipOf(ctx, db, biz, u.ID, role)
	if err != nil {
		return nil, err
	}
	m.CreatedAt = clock.Real{}.Now()
	if err := db.AddMember(ctx, m); err != nil {
		if payd.ErrorCode(err) == payd.ErrConflict {
			return nil, fmt.Errorf("%s is already a member of %s", email, biz)
		}
		return nil, err
	}
	return userOut(u, m), nil
}

// membershipOf checks the business exists and the role is one, and
// returns the membership to store.
func membershipOf(ctx context.Context, db payd.Store, biz, userID, role string) (*payd.Membership, error) {
	// The API never makes an owner (payd.ParseRole refuses one: a
	// business's owner is who created it); the operator may, which is how
	// a business made by business create gets one.
	r := payd.RoleOwner
	if role != string(payd.RoleOwner) {
		var err error
		if r, err = payd.ParseRole(role); err != nil {
			return nil, usagef("--role %q: owner, admin, developer or viewer", role)
		}
	}
	if _, err := db.BusinessByID(ctx, biz); err != nil {
		if payd.IsNotFound(err) {
			return nil, fmt.Errorf("business %s does not exist", biz)
		}
		return nil, err
	}
	return &payd.Membership{BusinessID: biz, UserID: userID, Role: r}, nil
}

func userOut(u *payd.User, m *payd.Membership) *newUser {
	out := &newUser{UserID: u.ID, Email: u.Email, Name: u.Name, HasPassword: u.PasswordHash != ""}
	if m != nil {
		role := string(m.Role)
		out.BusinessID, out.Role = &m.BusinessID, &role
	}
	return out
}
