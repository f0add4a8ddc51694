package testserver

import (
	"net/netip"
	"slices"
	"testing"
)

func TestParseProcNetTCP(t *testing.T) {
	const v4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0000000000000000 100 0 0 10 0
   1: 0B00007F:C350 0C00007F:1F91 01 00000000:00000000 00:00000000 00000000     0        0 101 1 0000000000000000 20 4 30 10 -1
   2: 0B00007F:C351 0D00007F:1F92 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1
   3: 0B00007F:C352 0E00007F:1F93 06 00000000:00000000 00:00000000 00000000     0        0 102 1 0000000000000000 20 4 30 10 -1
`
	const v6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000B00007F:C353 0000000000000000FFFF00000C00007F:1F94 01 00000000:00000000 00:00000000 00000000     0        0 103 1 0000000000000000 20 4 30 10 -1
   1: 00000000000000000000000001000000:C354 00000000000000000000000001000000:1F95 01 00000000:00000000 00:00000000 00000000     0        0 104 1 0000000000000000 20 4 30 10 -1
`
	inodes := map[string]bool{"100": true, "101": true, "102": true, "103": true, "104": true}
	for _, c := range []struct {
		name, table string
		want        []string
		bad         bool
	}{
		{"ipv4: established and ours only", v4, []string{"127.0.0.12:8081"}, false},
		{"ipv6: mapped unmapped", v6, []string{"127.0.0.12:8084", "[::1]:8085"}, false},
		{"header only", "  sl  local_address rem_address   st\n", nil, false},
		{"short line", "hdr\n 0: 0100007F:1F90 0100007F:1F90 01\n", nil, true},
		{"bad address", "hdr\n 0: x 0100007F 01 a b c d e 100\n", nil, true},
		{"odd address", "hdr\n 0: x 01007F:1F90 01 a b c d e 100\n", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseProcNetTCP(c.table, inodes)
			if (err != nil) != c.bad {
				t.Fatalf("error %v, want one: %v", err, c.bad)
			}
			var want []netip.AddrPort
			for _, w := range c.want {
				want = append(want, netip.MustParseAddrPort(w))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}
