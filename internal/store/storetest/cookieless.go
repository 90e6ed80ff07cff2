package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"strata/internal/analytics"
)

// testProductPrivacy checks a product's privacy settings: off until set,
// the last set kept, on that product only, beside its other settings.
func testProductPrivacy(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	if a.Privacy != (analytics.PrivacySettings{}) {
		t.Errorf("a new product's privacy settings are %+v; want both off", a.Privacy)
	}
	for _, v := range []analytics.PrivacySettings{{Cookieless: true, RespectPrivacySignals: true}, {Cookieless: true}} {
		if err := s.SetProductPrivacy(ctx, a.ID, v); err != nil {
			t.Fatal(err)
		}
	}
	ret := analytics.DataRetention{EventsDays: 30}
	if err := s.SetProductRetention(ctx, a.ID, ret); err != nil {
		t.Fatal(err)
	}
	want := analytics.PrivacySettings{Cookieless: true}
	if got, err := s.Product(ctx, a.ID); err != nil || got.Privacy != want || got.Retention != ret {
		t.Errorf("Product after SetProductPrivacy = %+v, %v; want privacy %+v", got, err, want)
	}
	if got, _ := s.Product(ctx, b.ID); got.Privacy != (analytics.PrivacySettings{}) {
		t.Errorf("another product's privacy settings: %+v", got.Privacy)
	}
	list, err := s.ListProducts(ctx, a.WorkspaceID)
	if err != nil || !slices.ContainsFunc(list, func(p analytics.Product) bool { return p.ID == a.ID && p.Privacy == want }) {
		t.Errorf("ListProducts = %+v, %v", list, err)
	}
	if err := s.SetProductPrivacy(ctx, a.ID+b.ID+100, want); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetProductPrivacy(unknown) = %v; want ErrNotFound", err)
	}
}

// testDailySalts checks the cookieless mode's salts: the first salt
// offered for a day is kept, later offers (also concurrent ones, from
// other nodes) get it, and asking for a day deletes the salts older than
// the day before it.
func testDailySalts(ctx context.Context, t *testing.T, s Meta) {
	salt := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	const day = 20_000
	got, err := s.DailySalt(ctx, day, salt(1))
	if err != nil || !bytes.Equal(got, salt(1)) {
		t.Fatalf("DailySalt(first) = %x, %v; want the offered salt", got, err)
	}
	// Eight nodes asking at once for the next day all get one salt.
	var wg sync.WaitGroup
	salts := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range salts {
		wg.Go(func() { salts[i], errs[i] = s.DailySalt(ctx, day+1, salt(byte(10+i))) })
	}
	wg.Wait()
	for i := range salts {
		if errs[i] != nil {
			t.Fatalf("concurrent DailySalt: %v", errs[i])
		}
		if !bytes.Equal(salts[i], salts[0]) || bytes.Equal(salts[0], salt(1)) {
			t.Fatalf("concurrent DailySalt gave %x and %x; want one salt of day+1", salts[i], salts[0])
		}
	}
	// day is the day before day+1: still kept.
	if got, err := s.DailySalt(ctx, day, salt(2)); err != nil || !bytes.Equal(got, salt(1)) {
		t.Errorf("DailySalt(day) again = %x, %v; want the first salt", got, err)
	}
	// Asking for day+2 deletes day's salt: offered again, a new one is kept.
	if _, err := s.DailySalt(ctx, day+2, salt(3)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.DailySalt(ctx, day, salt(4)); err != nil || !bytes.Equal(got, salt(4)) {
		t.Errorf("DailySalt(day) after day+2 = %x, %v; want a new salt (the old one deleted)", got, err)
	}
}
