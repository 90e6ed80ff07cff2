package geo

import (
	"bytes"
	"net/netip"
)

// ClientAddr is the address whose location an event gets (docs/ingest.md,
// "Geography"). It is peer, the connection's address, unless peer is one
// of the trusted proxies: then it is the right-most address of the
// X-Forwarded-For values (forwardedFor, the headers in the order they
// came, each a comma-separated list) that is not itself a trusted proxy,
// as each proxy appends the address it was reached from. Every address
// left of that one was written by the client, or by whoever the client
// is, and is not believed: a client cannot choose its country by sending
// the header, directly or through the proxies. The zero Addr, which has no
// location, is returned when the proxies forwarded no address, or the
// first untrusted entry is not an address.
func ClientAddr(peer netip.Addr, forwardedFor [][]byte, trusted []netip.Prefix) netip.Addr {
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer
	}
	// From the right: the last header's last entry is what the nearest
	// proxy saw.
	for h := len(forwardedFor) - 1; h >= 0; h-- {
		list := forwardedFor[h]
		for len(list) > 0 {
			item := list
			if i := bytes.LastIndexByte(list, ','); i >= 0 {
				item, list = list[i+1:], list[:i]
			} else {
				list = nil
			}
			item = bytes.TrimSpace(item)
			if len(item) == 0 {
				continue
			}
			addr, err := netip.ParseAddr(string(item))
			if err != nil {
				return netip.Addr{}
			}
			if addr = addr.Unmap().WithZone(""); !isTrusted(addr, trusted) {
				return addr
			}
		}
	}
	return netip.Addr{}
}

func isTrusted(addr netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
