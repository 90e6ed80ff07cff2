package analytics

import (
	"strings"
	"testing"
)

// TestValidateWebhookURL holds what a webhook may point at: http(s) URLs
// with a host, loopback and private addresses included; never another
// scheme, user information, a fragment, or a link-local, unspecified or
// multicast address.
func TestValidateWebhookURL(t *testing.T) {
	for _, ok := range []string{
		"https://hooks.example.com/strata",
		"http://127.0.0.1:8080/hook?token=abc",
		"http://localhost/hook",
		"http://[::1]:9000/",
		"http://10.0.0.5/hook",
		"http://192.168.1.20:3000/x",
		"https://hooks.example.com:8443/a/b",
	} {
		if err := ValidateWebhookURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "ftp://example.com/x", "file:///etc/passwd", "gopher://127.0.0.1:25/", "javascript:alert(1)",
		"/relative/path", "hooks.example.com/strata", "http:///nohost", "http://user:pw@example.com/",
		"http://example.com/#frag", "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/",
		"http://0.0.0.0:80/", "http://[::]/", "http://224.0.0.1/", "http://exa mple.com/",
		"https://example.com/" + strings.Repeat("a", 2048),
	} {
		err := ValidateWebhookURL(bad)
		if err == nil || !strings.HasPrefix(AsError(err).Message, "url: ") {
			t.Errorf("%q: %v; want it refused with the field named", bad, err)
		}
	}
}

// TestAlertWebhookValidate checks the spike rule's bounds.
func TestAlertWebhookValidate(t *testing.T) {
	w := AlertWebhook{URL: "https://hooks.example.com/x", SpikeFactor: DefaultSpikeFactor, SpikeMin: DefaultSpikeMin}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		factor float64
		min    int64
		field  string
	}{
		{1, 10, "spikeFactor"}, {1.49, 10, "spikeFactor"}, {1000.5, 10, "spikeFactor"}, {2.555, 10, "spikeFactor"},
		{5, 0, "spikeMinCount"}, {5, MaxSpikeMin + 1, "spikeMinCount"},
	} {
		w.SpikeFactor, w.SpikeMin = c.factor, c.min
		if err := w.Validate(); err == nil || !strings.HasPrefix(AsError(err).Message, c.field+":") {
			t.Errorf("factor %v min %d: %v; want %s refused", c.factor, c.min, err, c.field)
		}
	}
	w.SpikeFactor, w.SpikeMin = 1.5, 1
	if err := w.Validate(); err != nil {
		t.Errorf("the least rule refused: %v", err)
	}
}
