package rescuefake

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		line    string
		want    []pipeline
		wantErr bool
	}{
		{line: "sync", want: []pipeline{{cmds: [][]string{{"sync"}}}}},
		{line: `set -o pipefail; wget -nv -O- 'https://h/a b?x='\''1'\''' | xz -d | dd of=/dev/sda bs=4M`, want: []pipeline{
			{cmds: [][]string{{"set", "-o", "pipefail"}}},
			{connector: ";", cmds: [][]string{{"wget", "-nv", "-O-", "https://h/a b?x='1'"}, {"xz", "-d"}, {"dd", "of=/dev/sda", "bs=4M"}}},
		}},
		{line: `echo "a \"q\" $b" && false || true;`, want: []pipeline{
			{cmds: [][]string{{"echo", `a "q" $b`}}},
			{connector: "&&", cmds: [][]string{{"false"}}},
			{connector: "||", cmds: [][]string{{"true"}}},
		}},
		{line: "wget x |", wantErr: true},
		{line: "| xz -d", wantErr: true},
		{line: "a &&", wantErr: true},
		{line: "sleep 1 &", wantErr: true},
		{line: "echo 'open", wantErr: true},
		{line: `echo "open`, wantErr: true},
	}
	for _, tc := range cases {
		got, err := parse(tc.line)
		if (err != nil) != tc.wantErr {
			t.Errorf("parse(%q) error = %v, wantErr %v", tc.line, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) =\n %#v\nwant\n %#v", tc.line, got, tc.want)
		}
	}
}

func TestParseSizeAndProgressLine(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "4M": 4 << 20, "64K": 64 << 10, "1G": 1 << 30, "1MB": 1000000, "2b": 1024} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if got := progressLine(268435456, 2e9); got != "268435456 bytes (268 MB, 256 MiB) copied, 2 s, 134 MB/s" {
		t.Errorf("progressLine = %q", got)
	}
	if got := progressLine(0, 1e6); got != "0 bytes copied, 0.001 s, 0 B/s" {
		t.Errorf("progressLine(0) = %q", got)
	}
}
