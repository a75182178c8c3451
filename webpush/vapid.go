package webpush

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"
)

// Key is the service's VAPID key pair (RFC 8292): an ECDSA P-256 key whose
// public half browsers are given as the applicationServerKey, and which
// signs the JWT every push carries.
type Key struct {
	priv *ecdsa.PrivateKey
	pub  string
}

// GenerateKey makes a new VAPID key pair.
func GenerateKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return newKey(priv)
}

// ParseKey reads a key pair from the 32 bytes of its private scalar, as
// Bytes returns them.
func ParseKey(raw []byte) (*Key, error) {
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		return nil, errors.New("webpush: not a P-256 private key")
	}
	return newKey(priv)
}

func newKey(priv *ecdsa.PrivateKey) (*Key, error) {
	pub, err := priv.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	return &Key{priv: priv, pub: base64.RawURLEncoding.EncodeToString(pub)}, nil
}

// Bytes is the private scalar (32 bytes): a secret, to seal.
func (k *Key) Bytes() ([]byte, error) { return k.priv.Bytes() }

// PublicKey is the public key, the unpadded base64url of its 65-byte
// uncompressed point: the applicationServerKey a browser subscribes with,
// and the k= of every push's Authorization.
func (k *Key) PublicKey() string { return k.pub }

// JWTLife is how long a push's VAPID JWT is good for: within the 24 hours
// RFC 8292 §2 allows, and Apple's one day.
const JWTLife = 12 * time.Hour

// Audience is the origin of a push endpoint, as a VAPID JWT's aud names it:
// scheme://host, with the port only when it is not the scheme's default.
func Audience(endpoint *url.URL) string {
	scheme, host, port := strings.ToLower(endpoint.Scheme), strings.ToLower(endpoint.Hostname()), endpoint.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" && !(scheme == "https" && port == "443" || scheme == "http" && port == "80") {
		host += ":" + port
	}
	return scheme + "://" + host
}

// Authorization is the Authorization header of a push to endpoint (RFC
// 8292 §3): "vapid t=<JWT>, k=<public key>", the JWT ES256-signed with
// {"aud": endpoint's origin, "exp": now + JWTLife, "sub": subject}.
func (k *Key) Authorization(endpoint *url.URL, subject string, now time.Time) (string, error) {
	claims, err := json.Marshal(struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}{Audience(endpoint), now.Add(JWTLife).Unix(), subject})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`)) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, k.priv, sum[:])
	if err != nil {
		return "", err
	}
	// JWS's ES256 signature is r ‖ s, 32 bytes each (RFC 7518 §3.4).
	var sig [64]byte
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signed + "." + enc.EncodeToString(sig[:]) + ", k=" + k.pub, nil
}

// CheckSubject checks a VAPID contact (the JWT's sub): a mailto: address
// or an https URL (RFC 8292 §2.1; Apple refuses anything else).
func CheckSubject(sub string) error {
	if len(sub) > 200 {
		return errors.New("the push contact is longer than 200 characters")
	}
	if addr, ok := strings.CutPrefix(sub, "mailto:"); ok {
		at := strings.IndexByte(addr, '@')
		if at <= 0 || at == len(addr)-1 || strings.ContainsAny(addr, " \t\r\n<>\"") {
			return errors.New("the push contact's mailto: is not an email address")
		}
		return nil
	}
	u, err := url.Parse(sub)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return errors.New("the push contact must be mailto:<address> or an https URL")
	}
	return nil
}
