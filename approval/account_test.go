package approval_test

import (
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"math/bits"
	"testing"

	"countersign/approval"
)

type accountVectors struct {
	Implicit struct {
		Cases []struct {
			KeyType   string `json:"key_type"`
			Seed      string `json:"seed"`
			AccountID string `json:"account_id"`
		} `json:"cases"`
	} `json:"implicit"`
	AccountIDs struct {
		OK  []string `json:"ok"`
		Bad []string `json:"bad"`
	} `json:"account_ids"`
	AccountTypes struct {
		NearImplicit    []string `json:"near_implicit"`
		NotNearImplicit []string `json:"not_near_implicit"`
		EthImplicit     []string `json:"eth_implicit"`
		NotEthImplicit  []string `json:"not_eth_implicit"`
	} `json:"account_types"`
}

// nearcoreSeed is nearcore's test seed: the string's bytes, cut to 32 and
// padded with spaces.
func nearcoreSeed(s string) []byte {
	seed := []byte("                                ")
	copy(seed, s)
	return seed
}

// chacha12Stream returns n bytes of the ChaCha12 keystream for key with a
// 64-bit block counter from 0 and stream 0, as rand_chacha's ChaCha12Rng
// (Rust's StdRng) produces them from a 32-byte seed.
func chacha12Stream(key []byte, n int) []byte { return chachaStream(key, 12, n) }

// chachaStream is the ChaCha keystream with the given number of rounds.
func chachaStream(key []byte, rounds, n int) []byte {
	var k [8]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	out := make([]byte, 0, n+64)
	for counter := uint64(0); len(out) < n; counter++ {
		s := [16]uint32{
			0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
			k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7],
			uint32(counter), uint32(counter >> 32), 0, 0,
		}
		x := s
		qr := func(a, b, c, d int) {
			x[a] += x[b]
			x[d] = bits.RotateLeft32(x[d]^x[a], 16)
			x[c] += x[d]
			x[b] = bits.RotateLeft32(x[b]^x[c], 12)
			x[a] += x[b]
			x[d] = bits.RotateLeft32(x[d]^x[a], 8)
			x[c] += x[d]
			x[b] = bits.RotateLeft32(x[b]^x[c], 7)
		}
		for r := 0; r < rounds; r += 2 {
			qr(0, 4, 8, 12)
			qr(1, 5, 9, 13)
			qr(2, 6, 10, 14)
			qr(3, 7, 11, 15)
			qr(0, 5, 10, 15)
			qr(1, 6, 11, 12)
			qr(2, 7, 8, 13)
			qr(3, 4, 9, 14)
		}
		for i := range x {
			out = binary.LittleEndian.AppendUint32(out, x[i]+s[i])
		}
	}
	return out[:n]
}

// nearcoreSecp256k1Key is nearcore's SecretKey::from_seed(SECP256K1, seed):
// 32-byte draws from ChaCha12 until one is a valid scalar.
func nearcoreSecp256k1Key(t *testing.T, seed string) approval.PrivateKey {
	t.Helper()
	n, _ := new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)
	stream := chacha12Stream(nearcoreSeed(seed), 32*8)
	for i := 0; i < 8; i++ {
		d := stream[32*i : 32*i+32]
		if v := new(big.Int).SetBytes(d); v.Sign() > 0 && v.Cmp(n) < 0 {
			k, err := approval.NewSecp256k1Key(d)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
	}
	t.Fatal("no valid scalar in 8 draws")
	return approval.PrivateKey{}
}

func TestChaChaBlockFunction(t *testing.T) {
	t.Parallel()
	// RFC 7539 appendix A.1, test vector 1: ChaCha20, all-zero key, nonce
	// and counter. The 12-round stream differs only in the round count.
	const want = "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7" +
		"da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
	if got := hex.EncodeToString(chachaStream(make([]byte, 32), 20, 64)); got != want {
		t.Fatalf("ChaCha20 block:\n got %s\nwant %s", got, want)
	}
}

func TestNearcoreImplicitAccounts(t *testing.T) {
	t.Parallel()
	var v accountVectors
	readJSON(t, "nearcore-implicit-accounts.json", &v)
	if len(v.Implicit.Cases) != 2 {
		t.Fatalf("want 2 cases, got %d", len(v.Implicit.Cases))
	}
	for _, c := range v.Implicit.Cases {
		t.Run(c.KeyType, func(t *testing.T) {
			var key approval.PrivateKey
			var err error
			switch c.KeyType {
			case "ed25519":
				key, err = approval.NewEd25519Key(nearcoreSeed(c.Seed))
			case "secp256k1":
				key = nearcoreSecp256k1Key(t, c.Seed)
			default:
				t.Fatalf("unknown key type %q", c.KeyType)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := approval.ImplicitAccountID(key.PublicKey())
			if got != c.AccountID {
				t.Fatalf("implicit account: got %s, want %s", got, c.AccountID)
			}
			if !approval.IsImplicit(got) || approval.ValidateAccountID(got) != nil {
				t.Fatalf("%s is not recognised as a valid implicit account", got)
			}
			if !approval.IsOwnImplicitAccount(got, key.PublicKey()) {
				t.Fatal("IsOwnImplicitAccount is false for the key's own account")
			}
		})
	}
}

func TestAccountIDRules(t *testing.T) {
	t.Parallel()
	var v accountVectors
	readJSON(t, "nearcore-implicit-accounts.json", &v)
	for _, id := range v.AccountIDs.OK {
		if err := approval.ValidateAccountID(id); err != nil {
			t.Errorf("%q refused: %v", id, err)
		}
	}
	for _, id := range v.AccountIDs.Bad {
		err := approval.ValidateAccountID(id)
		if approval.KindOf(err) != approval.Malformed {
			t.Errorf("%q: want a malformed refusal, got %v", id, err)
		}
	}
	for _, id := range v.AccountTypes.NearImplicit {
		if !approval.IsNearImplicit(id) || approval.IsEthImplicit(id) {
			t.Errorf("%q should be NEAR-implicit only", id)
		}
	}
	for _, id := range v.AccountTypes.NotNearImplicit {
		if approval.IsNearImplicit(id) {
			t.Errorf("%q is not NEAR-implicit", id)
		}
	}
	for _, id := range v.AccountTypes.EthImplicit {
		if !approval.IsEthImplicit(id) || approval.IsNearImplicit(id) {
			t.Errorf("%q should be ETH-implicit only", id)
		}
	}
	for _, id := range v.AccountTypes.NotEthImplicit {
		if approval.IsEthImplicit(id) {
			t.Errorf("%q is not ETH-implicit", id)
		}
	}
}

func TestAccountIDRefusals(t *testing.T) {
	t.Parallel()
	for _, id := range []string{
		"", "a", "A1", "alice.NEAR", "alice..near", "alice.near.", ".alice", "alice_-x",
		"alice near", "alice\x00", "alice\n", "élan.near", "0X0123456789abcdef0123456789abcdef01234567",
		"0123456789012345678901234567890123456789012345678901234567890123x",
	} {
		if err := approval.ValidateAccountID(id); approval.KindOf(err) != approval.Malformed {
			t.Errorf("%q: want a malformed refusal, got %v", id, err)
		}
	}
	// Upper-case hex is not an implicit account (and not a valid id).
	if approval.IsImplicit("0xABCDEF0123456789abcdef0123456789abcdef01") {
		t.Error("upper-case ETH-implicit accepted")
	}
	if approval.ImplicitAccountID(approval.PublicKey{}) != "" {
		t.Error("the zero key has an implicit account")
	}
	if approval.IsOwnImplicitAccount("", approval.PublicKey{}) {
		t.Error("the zero key owns the empty account")
	}
}
