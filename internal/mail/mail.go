// Package mail sends the server's e-mail, today only invite links, over
// SMTP with the standard library's client: smtp:// upgrades with STARTTLS
// when the server offers it, smtps:// speaks TLS from the start, and a
// user and password in the URL sign in with PLAIN, which net/smtp only
// sends over TLS or to a server on loopback.
package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Mailer sends mail through one SMTP server.
type Mailer struct {
	addr, host string
	implicit   bool // smtps://: TLS from the first byte
	auth       smtp.Auth
	from       string
	// Timeout bounds a whole delivery, so that a stuck mail server does
	// not hold the request that made the invite.
	Timeout time.Duration
}

// New returns a mailer for an smtp:// or smtps:// URL
// (smtp://user:password@host:587) that sends from the address from.
func New(rawURL, from string) (*Mailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, fmt.Errorf("smtp-url: must be smtp://[user:password@]host[:port] or smtps://…")
	}
	if from == "" || strings.ContainsAny(from, "\r\n<>") || !strings.Contains(from, "@") {
		return nil, fmt.Errorf("smtp-from %q: must be the address mail is sent from, such as strata@example.com", from)
	}
	m := &Mailer{host: u.Hostname(), implicit: u.Scheme == "smtps", from: from, Timeout: 20 * time.Second}
	port := u.Port()
	if port == "" {
		port = "587"
		if m.implicit {
			port = "465"
		}
	}
	m.addr = net.JoinHostPort(m.host, port)
	if u.User != nil {
		pw, _ := u.User.Password()
		m.auth = smtp.PlainAuth("", u.User.Username(), pw, m.host)
	}
	return m, nil
}

// SendInvite e-mails an invite link to to, saying who invited them and
// until when the link works.
func (m *Mailer) SendInvite(ctx context.Context, to, invitedBy, link string, expires time.Time) error {
	body := fmt.Sprintf("%s invited you to their Strata analytics dashboard.\r\n\r\n"+
		"Open this link to choose a password and join:\r\n\r\n%s\r\n\r\n"+
		"The link works once, until %s. If you did not expect it, ignore this e-mail.\r\n",
		invitedBy, link, expires.UTC().Format("2 January 2006 15:04 UTC"))
	return m.send(ctx, to, "You are invited to Strata", body)
}

// send delivers one plain-text message. to and from are checked addresses
// (no CR or LF can reach a header).
func (m *Mailer) send(ctx context.Context, to, subject, body string) error {
	if strings.ContainsAny(to, "\r\n") {
		return fmt.Errorf("mail: bad recipient")
	}
	ctx, cancel := context.WithTimeout(ctx, m.Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if m.implicit {
		conn = tls.Client(conn, &tls.Config{ServerName: m.host})
	}
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: %w", err)
	}
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !m.implicit {
		if err := c.StartTLS(&tls.Config{ServerName: m.host}); err != nil {
			return fmt.Errorf("mail: STARTTLS: %w", err)
		}
	}
	if m.auth != nil {
		if err := c.Auth(m.auth); err != nil {
			return fmt.Errorf("mail: signing in: %w", err)
		}
	}
	if err := c.Mail(m.from); err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	msg := "From: " + m.from + "\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nDate: " + time.Now().UTC().Format(time.RFC1123Z) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	return c.Quit()
}
