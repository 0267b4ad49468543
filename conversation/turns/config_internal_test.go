package turns

import (
	"strings"
	"testing"
)

// TestOwnerUniquePerStart: the lease owner of a start is unique to it, even when
// Config.Owner is kept across restarts (else a lease left by a start that crashed
// would be taken again as this start's own, and its input's attempt not counted:
// an input that crashes the process would run for ever); it begins with Owner.
func TestOwnerUniquePerStart(t *testing.T) {
	for _, name := range []string{"replica-a", ""} {
		first, second := Config{Owner: name}.withDefaults().Owner, Config{Owner: name}.withDefaults().Owner
		if first == second {
			t.Errorf("Owner %q: two starts hold leases as %q both; want a name of each start's own", name, first)
		}
		if !strings.HasPrefix(first, name) || len(first) <= len(name) {
			t.Errorf("Owner %q: leases held as %q; want it followed by a suffix of the start's", name, first)
		}
	}
}
