package webhook

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestNewSecretRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 64 {
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, "whsec_") || len(s) != len("whsec_")+44 {
			t.Fatalf("NewSecret() has the wrong shape (length %d)", len(s))
		}
		if seen[s] {
			t.Fatal("NewSecret repeated a secret")
		}
		seen[s] = true
		key, err := DecodeSecret(s)
		if err != nil {
			t.Fatalf("DecodeSecret(NewSecret()) = %v", err)
		}
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if len(key) != 32 || !bytes.Equal(key, raw) {
			t.Fatal("DecodeSecret does not return the secret's 32 bytes")
		}
	}
}

func TestDecodeSecretFixed(t *testing.T) {
	t.Parallel()
	key, err := DecodeSecret("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range key {
		if int(b) != i {
			t.Fatalf("key[%d] = %d", i, b)
		}
	}
}

func TestDecodeSecretRefuses(t *testing.T) {
	t.Parallel()
	valid := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"prefix only", "whsec_"},
		{"no prefix", valid},
		{"other prefix", "whsk_" + valid},
		{"upper prefix", "WHSEC_" + valid},
		{"no padding", "whsec_" + strings.TrimSuffix(valid, "=")},
		{"url alphabet", "whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))},
		{"non-canonical last bits", "whsec_" + valid[:42] + "9="},
		{"16 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))},
		{"33 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 33))},
		{"64 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 64))},
		{"line break", "whsec_" + valid[:20] + "\n" + valid[20:43]},
		{"space", "whsec_ " + valid[1:]},
		{"trailing space", "whsec_" + valid + " "},
		{"not base64", "whsec_" + strings.Repeat("!", 44)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := DecodeSecret(tt.in)
			if !errors.Is(err, ErrSecret) || key != nil {
				t.Fatalf("DecodeSecret = %x, %v; want ErrSecret", key, err)
			}
		})
	}
}
