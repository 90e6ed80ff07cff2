package analytics

import (
	"net/netip"
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
		if err := ValidateWebhookURL(ok, WebhookPolicy{}); err != nil {
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
		err := ValidateWebhookURL(bad, WebhookPolicy{})
		if err == nil || !strings.HasPrefix(AsError(err).Message, "url: ") {
			t.Errorf("%q: %v; want it refused with the field named", bad, err)
		}
	}
}

// TestAlertWebhookValidate checks the spike rule's bounds.
func TestAlertWebhookValidate(t *testing.T) {
	w := AlertWebhook{URL: "https://hooks.example.com/x", SpikeFactor: DefaultSpikeFactor, SpikeMin: DefaultSpikeMin}
	if err := w.Validate(WebhookPolicy{}); err != nil {
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
		if err := w.Validate(WebhookPolicy{}); err == nil || !strings.HasPrefix(AsError(err).Message, c.field+":") {
			t.Errorf("factor %v min %d: %v; want %s refused", c.factor, c.min, err, c.field)
		}
	}
	w.SpikeFactor, w.SpikeMin = 1.5, 1
	if err := w.Validate(WebhookPolicy{}); err != nil {
		t.Errorf("the least rule refused: %v", err)
	}
}

// TestWebhookPolicy holds the addresses a webhook may be delivered to, in
// every form that carries an IPv4 address inside an IPv6 one, and public
// IPv6 addresses that merely look like those forms.
func TestWebhookPolicy(t *testing.T) {
	for _, c := range []struct {
		ip   string
		why  string // a part of the reason; "" when allowed
		name string
	}{
		{"169.254.169.254", "link-local", "the metadata address"},
		{"169.254.1.1", "link-local", "link-local"},
		{"fe80::1", "link-local", "IPv6 link-local"},
		{"fe80::1%eth0", "link-local", "with a zone"},
		{"0.0.0.0", "unspecified", "unspecified"},
		{"::", "unspecified", "IPv6 unspecified"},
		{"224.0.0.1", "multicast", "multicast"},
		{"ff02::1", "multicast", "IPv6 multicast"},
		{"100.100.100.200", "Alibaba", "Alibaba Cloud metadata"},
		{"192.0.0.192", "Oracle", "Oracle Cloud metadata"},
		{"fd00:ec2::254", "AWS", "AWS IPv6 metadata"},
		{"::ffff:169.254.169.254", "link-local", "IPv4-mapped"},
		{"::ffff:100.100.100.200", "(IPv4-mapped) is Alibaba", "IPv4-mapped Alibaba's"},
		{"::169.254.169.254", "(IPv4-compatible) is link-local", "IPv4-compatible"},
		{"::ffff:0:a9fe:a9fe", "(IPv4-translated) is link-local", "IPv4-translated"},
		{"64:ff9b::a9fe:a9fe", "169.254.169.254 inside it (NAT64) is link-local", "NAT64"},
		{"64:ff9b::6464:64c8", "(NAT64) is Alibaba", "NAT64 of Alibaba's"},
		{"64:ff9b::c000:c0", "(NAT64) is Oracle", "NAT64 of Oracle's"},
		{"64:ff9b:1:a9fe:a9:fe00::", "(local-use NAT64, /48) is link-local", "local-use NAT64 /48"},
		{"64:ff9b:1:0:a9:fea9:fe00:0", "(local-use NAT64, /64) is link-local", "local-use NAT64 /64"},
		{"64:ff9b:1::a9fe:a9fe", "(local-use NAT64, /96) is link-local", "local-use NAT64 /96"},
		{"2002:a9fe:a9fe::", "169.254.169.254 inside it (6to4) is link-local", "6to4"},
		{"2002:a9fe:a9fe:1234:5678::1", "(6to4) is link-local", "6to4, any host"},
		{"2002:e000:1::", "(6to4) is multicast", "6to4 of multicast"},
		{"2001:0:a9fe:a9fe::1", "(Teredo server) is link-local", "Teredo server"},
		{"2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254 inside it (Teredo client) is link-local", "Teredo client"},
		{"2001:0:4136:e378:8000:63bf:9b9b:9b37", "100.100.100.200 inside it (Teredo client) is Alibaba", "Teredo client of Alibaba's"},

		{"127.0.0.1", "", "loopback"},
		{"::1", "", "IPv6 loopback"},
		{"10.0.0.5", "", "private"},
		{"192.168.1.20", "", "private"},
		{"fd00:ec2::253", "", "next to AWS's"},
		{"100.100.100.201", "", "next to Alibaba's"},
		{"192.0.0.191", "", "next to Oracle's"},
		{"93.184.216.34", "", "public IPv4"},
		{"2606:2800:220:1::248", "", "public IPv6"},
		{"::ffff:127.0.0.1", "", "IPv4-mapped loopback"},
		{"64:ff9b::5db8:d822", "", "NAT64 of a public address"},
		{"64:ff9b:2::a9fe:a9fe", "", "past the local-use NAT64 prefix"},
		{"2002:5db8:d822::", "", "6to4 of a public address"},
		{"2003:a9fe:a9fe::", "", "looks like 6to4"},
		{"2001:db8::a9fe:a9fe", "", "looks like Teredo, documentation prefix"},
		{"2001:1::a9fe:a9fe", "", "looks like Teredo, 2001:1::"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "", "Teredo of public addresses"},
		{"::1:a9fe:a9fe", "", "not IPv4-compatible"},
		{"64:ff9b:1::5db8:d822", "", "local-use NAT64 of a public address"},
		{"2002::", "", "6to4 of 0.0.0.0"},
		{"fe:80::1", "", "looks like link-local"},
	} {
		ip := netip.MustParseAddr(c.ip)
		why := WebhookPolicy{}.Refusal(ip)
		if c.why == "" && why != "" || c.why != "" && !strings.Contains(why, c.why) {
			t.Errorf("%s (%s): %q; want %q", c.ip, c.name, why, c.why)
		}
	}
	// What the operator allows is allowed, in whatever form it comes.
	allow := WebhookPolicy{Allow: []netip.Prefix{
		netip.MustParsePrefix("100.100.100.200/32"), netip.MustParsePrefix("fd00:ec2::/64"), netip.MustParsePrefix("169.254.10.0/24"),
	}}
	for _, ip := range []string{"100.100.100.200", "64:ff9b::6464:64c8", "::ffff:100.100.100.200", "fd00:ec2::254", "169.254.10.7", "2002:a9fe:a07::"} {
		if why := allow.Refusal(netip.MustParseAddr(ip)); why != "" {
			t.Errorf("%s allowed by the operator, refused: %s", ip, why)
		}
	}
	for _, ip := range []string{"169.254.169.254", "192.0.0.192", "64:ff9b::a9fe:a9fe"} {
		if allow.Refusal(netip.MustParseAddr(ip)) == "" {
			t.Errorf("%s allowed: the allowed prefixes do not hold it", ip)
		}
	}
}

// TestValidateWebhookURLRefusesAddresses checks the URLs and the
// metadata addresses: 400 webhook_address_refused naming the url field,
// unless the operator allows the address.
func TestValidateWebhookURLRefusesAddresses(t *testing.T) {
	urls := []string{
		"http://[64:ff9b::a9fe:a9fe]/", "http://[::169.254.169.254]/", "http://[2002:a9fe:a9fe::]/",
		"http://[fd00:ec2::254]/latest/meta-data/", "http://100.100.100.200/latest/meta-data/", "http://192.0.0.192/opc/v2/instance/",
		"http://[fe80::1%25eth0]/", "http://169.254.169.254/",
	}
	for _, raw := range urls {
		err := ValidateWebhookURL(raw, WebhookPolicy{})
		e := AsError(err)
		if err == nil || e.Kind != KindInvalid || e.Code != "webhook_address_refused" || !strings.HasPrefix(e.Message, "url: ") ||
			!strings.Contains(e.Message, "--alert-webhook-allow") {
			t.Errorf("%s: %v; want 400 webhook_address_refused", raw, err)
		}
	}
	all := WebhookPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("::/0"), netip.MustParsePrefix("0.0.0.0/0")}}
	for _, raw := range urls {
		if err := ValidateWebhookURL(raw, all); err != nil {
			t.Errorf("%s allowed by the operator, refused: %v", raw, err)
		}
	}
}
