// Package password hashes and verifies account passwords with argon2id and
// asks Have I Been Pwned, when configured, whether a new password is known
// from a breach.
//
// The strength rules themselves are payd.CheckPassword, in the domain. This
// package holds what needs third-party code or the network: the argon2id
// hasher (Hasher), its PHC string format (Encode, Decode), the bound on
// concurrent hashes that keeps a flood of sign-ins from exhausting memory,
// and the k-anonymity range client (Pwned). docs/passwords.md gives the
// parameters as measured on this machine and the reasons for them.
package password
