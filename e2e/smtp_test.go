package e2e

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// smtpSink is a minimal SMTP server on a loopback port that accepts every
// message and hands each one's recipient and data to its channel.
type smtpSink struct {
	ln   net.Listener
	mail chan smtpMessage
}

type smtpMessage struct{ from, to, data string }

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpSink{ln: ln, mail: make(chan smtpMessage, 4)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *smtpSink) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	reply := func(line string) { fmt.Fprintf(conn, "%s\r\n", line) }
	reply("220 sink ESMTP")
	var m smtpMessage
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			reply("250 sink")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m.from = strings.TrimSpace(line[len("MAIL FROM:"):])
			reply("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			m.to = strings.TrimSpace(line[len("RCPT TO:"):])
			reply("250 ok")
		case cmd == "DATA":
			reply("354 go on")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			m.data = data.String()
			s.mail <- m
			reply("250 queued")
		case cmd == "QUIT":
			reply("221 bye")
			return
		default:
			reply("250 ok")
		}
	}
}

// TestInviteEmail sets --smtp-url to a mail server on loopback: an invite
// is e-mailed to the invitee with the link the admin was shown, under
// --public-url, and the link from the e-mail joins.
func TestInviteEmail(t *testing.T) {
	sink := newSMTPSink(t)
	s := startServer(t, t.TempDir(), "--smtp-url", "smtp://"+sink.ln.Addr().String(), "--smtp-from", "strata@example.com",
		"--public-url", "https://analytics.example.com")
	owner := setupOwner(t, s)
	r := owner.do(t, "GET", "/api/v1/session", nil)
	ws := int64(r.JSON(t)["memberships"].([]any)[0].(map[string]any)["workspaceId"].(float64))
	r = owner.do(t, "POST", fmt.Sprintf("/api/v1/workspaces/%d/invites", ws), map[string]string{"email": "new@example.com", "role": "member"})
	if r.Status != 201 || r.JSON(t)["emailed"] != true {
		t.Fatalf("invite: %d %s; want 201 with emailed true", r.Status, r.Body)
	}
	link := r.JSON(t)["url"].(string)
	if !strings.HasPrefix(link, "https://analytics.example.com/invite#st_inv_") {
		t.Errorf("the link %q is not under --public-url", link)
	}
	var m smtpMessage
	select {
	case m = <-sink.mail:
	case <-time.After(10 * time.Second):
		t.Fatal("no e-mail arrived")
	}
	if m.to != "<new@example.com>" || m.from != "<strata@example.com>" || !strings.Contains(m.data, link) ||
		!strings.Contains(m.data, "To: new@example.com\r\n") || !strings.Contains(m.data, "owner@example.com invited you") {
		t.Fatalf("the e-mail: from %s to %s\n%s", m.from, m.to, m.data)
	}
	_, token, _ := strings.Cut(link, "#")
	b := accept(t, s, token, "from the e-mail 1")
	if r := b.do(t, "GET", "/api/v1/session", nil); !strings.Contains(string(r.Body), `"role":"member"`) {
		t.Errorf("the session of the e-mailed invitee: %s", r.Body)
	}
}
