package imaging

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// uncompressedSize reads the uncompressed size of a remote .xz file from
// its index with two HTTP range requests (the stream footer, then the
// index), so that write progress can be shown as a fraction. Layout per
// "The .xz File Format" 1.2.1, sections 2.1.2 (footer) and 4 (index). Only
// the last stream is read; multi-stream files report a lower bound.
func uncompressedSize(ctx context.Context, hc *http.Client, imageURL string) (int64, error) {
	footer, total, err := fetchRange(ctx, hc, imageURL, "bytes=-12")
	if err != nil {
		return 0, err
	}
	if len(footer) != 12 || !bytes.Equal(footer[10:], []byte("YZ")) {
		return 0, errors.New("no xz stream footer")
	}
	le := binary.LittleEndian
	if crc32.ChecksumIEEE(footer[4:10]) != le.Uint32(footer[0:4]) {
		return 0, errors.New("xz stream footer CRC mismatch")
	}
	indexSize := (int64(le.Uint32(footer[4:8])) + 1) * 4
	if total < 12+indexSize {
		return 0, errors.New("xz index larger than the file")
	}
	start := total - 12 - indexSize
	index, _, err := fetchRange(ctx, hc, imageURL, fmt.Sprintf("bytes=%d-%d", start, total-13))
	if err != nil {
		return 0, err
	}
	if int64(len(index)) != indexSize || index[0] != 0x00 {
		return 0, errors.New("no xz index where the footer points")
	}
	if crc32.ChecksumIEEE(index[:len(index)-4]) != le.Uint32(index[len(index)-4:]) {
		return 0, errors.New("xz index CRC mismatch")
	}
	r := bytes.NewReader(index[1 : len(index)-4])
	records, err := readVLI(r)
	if err != nil {
		return 0, err
	}
	var size int64
	for range records {
		if _, err := readVLI(r); err != nil { // unpadded size
			return 0, err
		}
		n, err := readVLI(r)
		if err != nil {
			return 0, err
		}
		size += int64(n)
	}
	return size, nil
}

// fetchRange GETs one byte range and returns it with the file's total size
// from Content-Range. A server that ignores Range is an error: the whole
// image is not worth downloading twice.
func fetchRange(ctx context.Context, hc *http.Client, u, rng string) ([]byte, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Range", rng)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusPartialContent {
		return nil, 0, fmt.Errorf("range request answered %s", resp.Status)
	}
	cr := resp.Header.Get("Content-Range")
	i := strings.LastIndexByte(cr, '/')
	total, err := strconv.ParseInt(cr[i+1:], 10, 64)
	if i < 0 || err != nil {
		return nil, 0, fmt.Errorf("bad Content-Range %q", cr)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return body, total, err
}

// readVLI reads an xz variable-length integer (at most 9 bytes).
func readVLI(r io.ByteReader) (uint64, error) {
	var x uint64
	for i := 0; i < 9; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, errors.New("truncated xz index")
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return x, nil
		}
	}
	return 0, errors.New("xz integer too long")
}
