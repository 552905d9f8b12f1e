package cloud

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// reservedLabelPrefix is the key prefix Hetzner keeps for itself (API
// description, "Labels"): the one rule where Hetzner's labels differ from
// Kubernetes' qualified names.
const reservedLabelPrefix = "hetzner.cloud/"

// LabelSelector is a parsed Hetzner label selector: all requirements must
// hold. Hetzner documents the same syntax and key and value rules as
// Kubernetes (k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b); a comma
// is a logical AND), so the parsing is apimachinery's labels.Parse, with
// two Hetzner rules on top: no gt/lt operators (Hetzner documents none)
// and no keys under the reserved hetzner.cloud/ prefix.
type LabelSelector struct {
	sel labels.Selector
}

// ParseSelector parses a label selector; the empty string matches everything.
func ParseSelector(s string) (LabelSelector, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return LabelSelector{}, fmt.Errorf("label selector %q: %w", s, err)
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if op := r.Operator(); op == selection.GreaterThan || op == selection.LessThan {
			return LabelSelector{}, fmt.Errorf("label selector %q: operator %q on key %q: Hetzner selectors have no gt or lt; use =, !=, in or notin", s, op, r.Key())
		}
		if strings.HasPrefix(r.Key(), reservedLabelPrefix) {
			return LabelSelector{}, fmt.Errorf("label selector %q: key %q uses the prefix %s, which Hetzner reserves", s, r.Key(), reservedLabelPrefix)
		}
	}
	return LabelSelector{sel: sel}, nil
}

// CheckLabelKey rejects a label key Hetzner does not allow: Kubernetes'
// qualified name (an optional DNS-subdomain prefix and "/", then a name of
// at most 63 characters, alphanumeric at both ends, with -, _ and . between)
// outside the reserved hetzner.cloud/ prefix.
func CheckLabelKey(key string) error {
	if errs := content.IsLabelKey(key); len(errs) > 0 {
		return fmt.Errorf("invalid label key %q: %s", key, strings.Join(errs, "; "))
	}
	if strings.HasPrefix(key, reservedLabelPrefix) {
		return fmt.Errorf("invalid label key %q: the prefix %s is reserved by Hetzner; use your own prefix such as ohmytalos.io/", key, reservedLabelPrefix)
	}
	return nil
}

// CheckLabelValue rejects a label value Hetzner does not allow: empty, or
// at most 63 characters, alphanumeric at both ends, with -, _ and . between,
// as in Kubernetes.
func CheckLabelValue(key, value string) error {
	if errs := content.IsLabelValue(value); len(errs) > 0 {
		return fmt.Errorf("invalid value %q for label %q: %s", value, key, strings.Join(errs, "; "))
	}
	return nil
}

// Matches reports whether labels satisfy every requirement. As in Kubernetes,
// k!=v and k notin (...) also match objects without the label k.
func (s LabelSelector) Matches(set map[string]string) bool {
	if s.sel == nil {
		return true
	}
	return s.sel.Matches(labels.Set(set))
}
