package httpapi

import (
	"io"
	"net"
	"time"
)

// Lingering closes: when the server closes a connection whose client may
// still be sending (a 413 answered before a 6 MB body was read, a request
// refused before its body), closing at once makes the kernel reset the
// connection over the unread bytes, and the client sees "connection reset"
// instead of the answer. net/http avoids this by half-closing and waiting;
// fasthttp closes outright, so the listener's connections do it instead.
const (
	lingerTimeout  = time.Second
	lingerMaxBytes = 16 << 20
)

// LingeringListener returns ln with every accepted TCP connection's Close
// made lingering: Close sends FIN after what was written and returns at
// once, and a goroutine reads and drops what the client still sends, for
// up to lingerTimeout or lingerMaxBytes, before closing for good.
func LingeringListener(ln net.Listener) net.Listener { return lingeringListener{ln} }

type lingeringListener struct{ net.Listener }

func (l lingeringListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &lingeringConn{TCPConn: tc}, nil
	}
	return c, err
}

type lingeringConn struct{ *net.TCPConn }

func (c *lingeringConn) Close() error {
	if err := c.TCPConn.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	go func() {
		c.TCPConn.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.CopyN(io.Discard, c.TCPConn, lingerMaxBytes)
		c.TCPConn.Close()
	}()
	return nil
}
