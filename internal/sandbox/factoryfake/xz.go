package factoryfake

import (
	"encoding/binary"
	"hash/crc32"
)

// xzStore wraps data in a valid .xz container (single stream, single block,
// CRC32 check) whose LZMA2 payload is made of uncompressed chunks. No
// compression happens, but any xz decoder (xz -d, the Go xz packages) reads
// it back, which is all the sandbox's disk images need.
//
// Layout follows "The .xz File Format" 1.2.1 (tukaani.org/xz/xz-file-format.txt):
// stream header, block header (one LZMA2 filter), LZMA2 chunks (control byte
// 0x01 = uncompressed with dictionary reset, 0x02 = uncompressed, 0x00 = end),
// block padding, CRC32 check, index, stream footer.
func xzStore(data []byte) []byte {
	le := binary.LittleEndian
	var out []byte

	// Stream header: magic, flags (check type 0x01 = CRC32), CRC32 of flags.
	flags := []byte{0x00, 0x01}
	out = append(out, 0xFD, '7', 'z', 'X', 'Z', 0x00)
	out = append(out, flags...)
	out = le.AppendUint32(out, crc32.ChecksumIEEE(flags))

	// Block header: size byte, block flags (one filter, no sizes), filter
	// flags (ID 0x21 LZMA2, 1 property byte, dictionary size 4 KiB), padding
	// to a multiple of four, CRC32.
	hdr := []byte{0x00, 0x00, 0x21, 0x01, 0x00, 0x00, 0x00, 0x00}
	hdr[0] = byte((len(hdr)+4)/4 - 1)
	hdr = le.AppendUint32(hdr, crc32.ChecksumIEEE(hdr))
	blockStart := len(out)
	out = append(out, hdr...)

	// LZMA2 uncompressed chunks of at most 64 KiB.
	const chunk = 1 << 16
	for i := 0; i < len(data); i += chunk {
		end := min(i+chunk, len(data))
		ctrl := byte(0x02)
		if i == 0 {
			ctrl = 0x01
		}
		n := end - i - 1
		out = append(out, ctrl, byte(n>>8), byte(n))
		out = append(out, data[i:end]...)
	}
	out = append(out, 0x00)
	unpadded := len(out) - blockStart + 4 // header + compressed data + check
	for (len(out)-blockStart)%4 != 0 {
		out = append(out, 0x00)
	}
	out = le.AppendUint32(out, crc32.ChecksumIEEE(data))

	// Index: indicator, one record (unpadded size, uncompressed size),
	// padding, CRC32.
	idx := []byte{0x00}
	idx = appendVLI(idx, 1)
	idx = appendVLI(idx, uint64(unpadded))
	idx = appendVLI(idx, uint64(len(data)))
	for len(idx)%4 != 0 {
		idx = append(idx, 0x00)
	}
	idx = le.AppendUint32(idx, crc32.ChecksumIEEE(idx))
	out = append(out, idx...)

	// Stream footer: CRC32 of (backward size, flags), backward size, flags, magic.
	back := le.AppendUint32(nil, uint32(len(idx)/4-1))
	back = append(back, flags...)
	out = le.AppendUint32(out, crc32.ChecksumIEEE(back))
	out = append(out, back...)
	out = append(out, 'Y', 'Z')
	return out
}

// appendVLI appends x in the xz variable-length integer encoding.
func appendVLI(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}
