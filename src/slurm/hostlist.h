#pragma once

// Slurm hostlist expressions ("slinky-[0-3],cpu-workers-0"), parsed and printed
// the way Slurm's own `src/common/hostlist.c` does, so that a name corral
// writes into slurm.conf or reads back from `sinfo` means the same set of
// nodes to both programs. Both functions are pure and thread-safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "corral/status.h"

namespace corral {

// Slurm refuses a single bracket range of more than 64Ki hosts (`MAX_RANGE`);
// corral uses the same number as its default ceiling for a whole expression.
inline constexpr size_t kDefaultMaxHosts = 65536;

// The longest host name an expression may produce. 255 is the longest DNS
// name; the limit also bounds the memory an expansion can use to
// `maxHosts * (kMaxHostNameLength + 1)` bytes plus string overhead.
inline constexpr size_t kMaxHostNameLength = 255;

// Expands a hostlist expression into host names, in the order Slurm's
// `hostlist_create()` followed by `hostlist_next()` yields them. Duplicates are
// kept, as Slurm keeps them (`a,a` names `a` twice).
//
// Grammar, as Slurm accepts it:
//   - Names are separated by ',' (Slurm also accepts ' ' and '\t', and so does
//     this function; a comma with blanks around it is one separator).
//   - A name is made of the characters [A-Za-z0-9._-] and bracket groups.
//     A bracket group holds comma-separated numbers and `lo-hi` ranges:
//     `slinky-[0-1,5,8-10]`. The width of `lo` sets the zero padding of every
//     number in that range, as Slurm's `printf("%0*lu")` does: `[00-02]` gives
//     00, 01, 02 and `[8-10]` gives 8, 9, 10.
//   - A name may hold several groups (`r[1-2]n[1-2]`), which expand to their
//     cartesian product. The order is Slurm's: the groups before the last are
//     iterated from the second-to-last (slowest) back to the first, and the
//     last group varies fastest. For two groups that is the usual row-major
//     order: r1n1, r1n2, r2n1, r2n2.
//   - As in Slurm, a name must end with its last bracket group if it has any:
//     `node[1-2]-ib` is an error.
//
// Stricter than Slurm, because every case below is a typo rather than intent:
// empty names (`a,,b`, a leading or trailing comma, an empty expression), an
// unclosed '[' (Slurm appends a ']'), a range with an empty bound (`[1-]`),
// and blanks inside brackets are errors.
//
// Returns InvalidArgument, with a message that quotes the offending part, for
// any malformed expression, for a name longer than `kMaxHostNameLength`, and
// for an expression that names more than `maxHosts` hosts. The host count is
// computed arithmetically before anything is expanded, so an expression such
// as `n[0-999999999]` fails at once without allocating for its hosts.
StatusOr<std::vector<std::string>> expandHostlist(std::string_view expr,
                                                  size_t maxHosts = kDefaultMaxHosts);

// The inverse of `expandHostlist`: compresses host names into one expression,
// as `sinfo` prints a node list after Slurm's `hostlist_sort()`.
//   - Duplicates are removed.
//   - Names are split into a prefix and a numeric suffix (their trailing
//     digits). Hosts are sorted by prefix, compared naturally as Slurm's
//     `strnatcmp` does (so `r2n` sorts before `r10n`), then by number.
//   - Hosts that share a prefix share one bracket group:
//     `cpu-workers-[0-1],slinky-[0-3]`, `slinky-[0-1,3]`. A lone numbered host
//     is printed without brackets: `slinky-0`.
//   - Zero padding is kept exact: `n01` and `n1` are different hosts and land
//     in different ranges (`n[1,01]`), while `n08,n09,n10` joins into
//     `n[08-10]` because printing 10 with width 2 adds no zero.
//   - A name without trailing digits is printed as it is, before any numbered
//     hosts with the same prefix.
// The names are expected to be valid host names, such as `expandHostlist`
// returns; they are not validated here. An empty input gives "".
// For any such input `expandHostlist(compressHostlist(hosts))` returns the
// sorted, de-duplicated hosts.
std::string compressHostlist(const std::vector<std::string>& hosts);

}  // namespace corral
