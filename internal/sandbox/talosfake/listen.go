package talosfake

import (
	"net"
	"net/netip"
)

// admitListener drops the connections the server's Hetzner firewall would
// drop: Hetzner filters before the packet reaches the server, so the client
// sees its connection go nowhere; the sandbox closes it at once.
type admitListener struct {
	net.Listener

	admit    func(serverID int64, remote netip.Addr, port int) bool
	serverID int64
	port     int
}

// Accept returns the next admitted connection.
func (l *admitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err //nolint:wrapcheck // the listener's own error, as net/http and gRPC expect it
		}

		if l.admit(l.serverID, remoteAddr(conn), l.port) {
			return conn, nil
		}

		_ = conn.Close() //nolint:errcheck // dropping the connection is the point
	}
}

func remoteAddr(conn net.Conn) netip.Addr {
	if tcp, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}

	ap, err := netip.ParseAddrPort(conn.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}

	return ap.Addr().Unmap()
}

// admit wraps the API listener with the cluster's firewall admission; the
// port is apid's (50000) whatever port the sandbox bound.
func (n *Node) admit(l net.Listener) net.Listener {
	return n.admitPort(l, DefaultPort)
}

// admitPort wraps a listener with the cluster's firewall admission for the
// Hetzner-side port (50000 for apid, 6443 for the Kubernetes API).
func (n *Node) admitPort(l net.Listener, port int) net.Listener {
	if n.cluster.opts.Admit == nil {
		return l
	}

	return &admitListener{Listener: l, admit: n.cluster.opts.Admit, serverID: n.opts.ServerID, port: port}
}
