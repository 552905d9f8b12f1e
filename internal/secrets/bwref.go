package secrets

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// bwIDPattern is the shape of a Bitwarden item ID (a GUID). bw treats any
// other reference as a search term (bitwarden/clients apps/cli/src/commands/
// get.command.ts: Utils.isGuid, else a name search), so an ID is the only
// reference that can never pick another item.
var bwIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// isBWID reports whether ref is an item ID rather than a name.
func isBWID(ref string) bool { return bwIDPattern.MatchString(ref) }

// checkBWRef refuses references that could be read as a flag or that hold
// control characters: they reach bw's command line.
func checkBWRef(ref Ref) error {
	switch {
	case strings.TrimSpace(ref.Ref) == "":
		return fmt.Errorf("secret %s: the bw reference is empty: set ref to the item's ID (bw list items --search NAME shows it) or its exact name", ref.String())
	case strings.HasPrefix(ref.Ref, "-"):
		return fmt.Errorf("secret %s: the bw reference %q starts with '-' and would be read as an option: use the item's ID (bw list items --search NAME shows it)", ref.String(), ref.Ref)
	case strings.IndexFunc(ref.Ref, unicode.IsControl) >= 0:
		return fmt.Errorf("secret %s: the bw reference holds a control character: use the item's ID or its exact name", ref.String())
	}
	return nil
}

// exactItem picks the one item named exactly like ref.Ref from a search
// result (a search also matches other names containing the term). Two
// items of that name is an error naming their IDs: guessing would read the
// wrong secret.
func exactItem(ref Ref, items []bwItem, where string) (bwItem, error) {
	var match []bwItem
	for _, it := range items {
		if it.Name == ref.Ref {
			match = append(match, it)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return bwItem{}, fmt.Errorf(`secret %s: no item is named exactly %q on %s: check the name, or use the item's ID (bw list items --search %q; "bw sync" if it is new)`,
			ref.String(), ref.Ref, where, ref.Ref)
	}
	ids := make([]string, 0, len(match))
	for _, it := range match {
		ids = append(ids, it.ID)
	}
	sort.Strings(ids)
	return bwItem{}, fmt.Errorf("secret %s: %d items are named %q on %s (IDs %s): set ref to the ID of the one you mean",
		ref.String(), len(match), ref.Ref, where, strings.Join(ids, ", "))
}

// checkServeURL accepts a bw serve URL only when nobody else can read or
// answer the traffic: on this machine (loopback) or over https. bw serve
// has no authentication of its own and answers with decrypted secrets.
func checkServeURL(ref Ref, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("secret %s: bw serve URL %q is not a URL such as http://localhost:8087", ref.String(), raw)
	}
	switch {
	case u.Scheme == "https":
		return u, nil
	case u.Scheme == "http" && safeurl.IsLoopbackHost(u.Hostname()):
		return u, nil
	}
	return nil, fmt.Errorf("secret %s: bw serve URL %q is neither on this machine nor https: bw serve answers with decrypted secrets to anyone who can reach it; "+
		"run it with \"bw serve --hostname localhost\" and use http://localhost:PORT, or put it behind https", ref.String(), raw)
}
