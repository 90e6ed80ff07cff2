package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Passwords are hashed with argon2id at OWASP's recommended cost (19 MiB,
// two passes, one lane) and stored in the PHC string form,
// $argon2id$v=19$m=19456,t=2,p=1$salt$hash, so that the cost can be raised
// later without breaking stored hashes: CheckPassword reads it from the
// string.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonSaltLen = 16
	argonKeyLen  = 32
	// argonMaxMemory bounds what a stored hash may ask for, so that a
	// corrupt row cannot make a check allocate without limit.
	argonMaxMemory = 1 << 20 // KiB, 1 GiB
)

// hashSlots bounds how many hashes run at once. Each holds 19 MiB for tens
// of milliseconds; without a bound a flood of sign-ins from many addresses
// (each under its own rate limit) could still exhaust memory.
var hashSlots = make(chan struct{}, max(2, runtime.NumCPU()))

// HashPassword returns the PHC string of a new argon2id hash of password
// with a random salt.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	key := argonKey(password, salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, enc.EncodeToString(salt), enc.EncodeToString(key))
}

// CheckPassword reports whether password matches the PHC string stored. It
// compares in constant time; a malformed stored string is an error.
func CheckPassword(stored, password string) (bool, error) {
	salt, want, t, m, p, err := parsePHC(stored)
	if err != nil {
		return false, err
	}
	got := argonKey(password, salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when a sign-in names no known user, so
// that the answer takes as long as for a wrong password and does not tell
// which emails have accounts.
// It is made on first use, so that processes that never check a password
// (the CLI) do not pay for it.
var dummyHash = sync.OnceValue(func() string { return HashPassword("strata-dummy-password") })

func argonKey(password string, salt []byte, t, m uint32, p uint8, n uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey([]byte(password), salt, t, m, p, n)
}

var errBadPHC = errors.New("stored password hash is not an argon2id PHC string")

// parsePHC splits $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func parsePHC(s string) (salt, key []byte, t, m uint32, p uint8, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return nil, nil, 0, 0, 0, errBadPHC
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return nil, nil, 0, 0, 0, errBadPHC
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil ||
		m == 0 || m > argonMaxMemory || t == 0 || t > 16 || p == 0 {
		return nil, nil, 0, 0, 0, errBadPHC
	}
	enc := base64.RawStdEncoding
	if salt, err = enc.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return nil, nil, 0, 0, 0, errBadPHC
	}
	if key, err = enc.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return nil, nil, 0, 0, 0, errBadPHC
	}
	return salt, key, t, m, p, nil
}
