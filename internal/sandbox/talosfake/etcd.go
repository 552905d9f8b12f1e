package talosfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"net"
	"strconv"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
)

// etcd snapshot layout: etcd's snapshot is a bbolt database file followed by
// the SHA-256 of its bytes (etcd server/storage/backend snapshot + the hash
// etcdutl checks on restore). bbolt starts with two meta pages carrying the
// magic 0xED0CDAED, format version 2 and the page size.
const (
	boltPageSize  = 4096
	boltMagic     = 0xED0CDAED
	boltVersion   = 2
	boltMetaFlag  = 0x04
	boltLeafFlag  = 0x02
	boltFreeFlag  = 0x10
	boltPageCount = 4
)

// memberID derives an etcd member ID from the server ID and the join
// sequence (etcd member IDs are random 64-bit numbers and change when a
// node joins again; derived ones keep tests reproducible).
func memberID(serverID int64, join uint64) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.FormatInt(serverID, 10) + "/" + strconv.FormatUint(join, 10))) //nolint:errcheck // hash writes never fail

	return h.Sum64()
}

// etcdAddr is the address etcd advertises: Talos picks the node's address
// in the private network when it has one (etcd.advertisedSubnets defaults).
func (n *Node) etcdAddr() string {
	if n.opts.PrivateIP != "" {
		return n.opts.PrivateIP
	}

	return n.opts.PublicIP
}

func (m *etcdMember) proto() *machine.EtcdMember {
	host := m.host

	return &machine.EtcdMember{
		Id:         m.id,
		Hostname:   m.name,
		PeerUrls:   []string{"https://" + net.JoinHostPort(host, "2380")},
		ClientUrls: []string{"https://" + net.JoinHostPort(host, "2379")},
		IsLearner:  false,
	}
}

// snapshotBlob renders a small bbolt-shaped database holding the member list,
// followed by its SHA-256, like an etcd snapshot.
func snapshotBlob(clusterID string, members []*machine.EtcdMember, now time.Time) []byte {
	db := make([]byte, boltPageCount*boltPageSize)

	for pgid := range 2 {
		page := db[pgid*boltPageSize:]
		binary.LittleEndian.PutUint64(page[0:], uint64(pgid))
		binary.LittleEndian.PutUint16(page[8:], boltMetaFlag)

		meta := page[16:]
		binary.LittleEndian.PutUint32(meta[0:], boltMagic)
		binary.LittleEndian.PutUint32(meta[4:], boltVersion)
		binary.LittleEndian.PutUint32(meta[8:], boltPageSize)
		binary.LittleEndian.PutUint64(meta[16:], 3)                  // root bucket page
		binary.LittleEndian.PutUint64(meta[32:], 2)                  // freelist page
		binary.LittleEndian.PutUint64(meta[40:], boltPageCount)      // high water mark
		binary.LittleEndian.PutUint64(meta[48:], uint64(now.Unix())) //nolint:gosec // txid only has to grow
		h := fnv.New64a()
		_, _ = h.Write(meta[:56]) //nolint:errcheck // hash writes never fail
		binary.LittleEndian.PutUint64(meta[56:], h.Sum64())
	}

	free := db[2*boltPageSize:]
	binary.LittleEndian.PutUint64(free[0:], 2)
	binary.LittleEndian.PutUint16(free[8:], boltFreeFlag)

	leaf := db[3*boltPageSize:]
	binary.LittleEndian.PutUint64(leaf[0:], 3)
	binary.LittleEndian.PutUint16(leaf[8:], boltLeafFlag)

	type member struct {
		ID       string   `json:"id"`
		Name     string   `json:"name"`
		PeerURLs []string `json:"peerURLs"`
	}

	body := struct {
		ClusterID string   `json:"clusterID"`
		Members   []member `json:"members"`
	}{ClusterID: clusterID}

	for _, m := range members {
		body.Members = append(body.Members, member{ID: strconv.FormatUint(m.GetId(), 16), Name: m.GetHostname(), PeerURLs: m.GetPeerUrls()})
	}

	payload, _ := json.Marshal(body) //nolint:errcheck // plain structs always marshal
	if len(payload) > boltPageSize-16 {
		payload = payload[:boltPageSize-16]
	}

	binary.LittleEndian.PutUint16(leaf[10:], 1)
	copy(leaf[16:], payload)

	sum := sha256.Sum256(db)

	var out bytes.Buffer
	out.Grow(len(db) + len(sum))
	out.Write(db)
	out.Write(sum[:])

	return out.Bytes()
}
